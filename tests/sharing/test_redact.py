"""Redaction: each kind of secret found and replaced, where it was, nothing else changed."""

from __future__ import annotations

import orjson
import pytest

from turnback.sharing.redact import redact_bytes, redact_text

SECRETS = {
    "AWS Access Key": "AKIAIOSFODNN7EXAMPLE",
    "GitHub Token": "ghp_" + "a1B2c3D4e5" * 3 + "abcdef",
    "Slack Token": "xoxb-1234567890-abcdefghij",
    "Stripe Access Key": "sk_live_" + "a1b2c3d4" * 3,
    "OpenAI Token": "sk-proj-abcdefghijklmnopqrstT3BlbkFJabcdefghijklmnopqrst",
    "PyPI Token": "pypi-AgEIcHlwaS5vcmc" + "A" * 70,
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_service_token_is_redacted(kind: str) -> None:
    secret = SECRETS[kind]
    data = f"line one\nconfig = '{secret}'\nline three\n".encode()
    out, found = redact_bytes(data)
    assert secret.encode() not in out
    assert f"[redacted:{kind}]".encode() in out
    assert out.startswith(b"line one\nconfig = '") and out.endswith(b"'\nline three\n")
    assert [f.line for f in found] == [2]


def test_a_whole_private_key_block_goes() -> None:
    key = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\nabcdEFGH5678\n"
           "-----END RSA PRIVATE KEY-----")
    out, found = redact_bytes(f"before\n{key}\nafter\n".encode())
    assert out == b"before\n[redacted:Private Key]\nafter\n"
    assert [(f.kind, f.line) for f in found] == [("Private Key", 2)]


def test_secret_variables_and_passwords_in_urls() -> None:
    src = (b'DB_PASSWORD=hunter2hunter2\napi_key = "0123456789abcdef"\n'
           b'url = "https://bob:pa55word1@example.com/x"\ntoken = get_token()\n'
           b'PASSWORD_MIN_LENGTH = 8\n')
    out, found = redact_bytes(src)
    assert b"hunter2hunter2" not in out and b"0123456789abcdef" not in out
    assert b"pa55word1" not in out and b"https://bob:" in out
    assert b"token = get_token()\n" in out and b"PASSWORD_MIN_LENGTH = 8\n" in out
    assert len(found) == 3


def test_ordinary_code_binary_and_lock_hashes_are_untouched() -> None:
    code = (b"def f(x):\n    return hashlib.sha256(x).hexdigest()\n"
            b'integrity "sha512-' + b"Zm9vYmFy" * 10 + b'"\n'
            b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n")
    assert redact_bytes(code) == (code, [])
    binary = b"\0\x01AKIAIOSFODNN7EXAMPLE"
    assert redact_bytes(binary) == (binary, [])


def test_text_in_json_stays_valid_json() -> None:
    text = 'here: {"key": "AKIAIOSFODNN7EXAMPLE"} and \\ "quotes"'
    out, found = redact_text(text)
    assert "AKIAIOSFODNN7EXAMPLE" not in out and found[0].kind == "AWS Access Key"
    assert orjson.loads(orjson.dumps({"t": out}))["t"] == out


def _plain_spans(text: str | bytes) -> list[tuple[int, int, str]]:
    """Every rule's expression over the whole content, as before the gates: the reference."""
    from turnback.sharing.redact import _rules

    found = []
    for rule in _rules():
        rx = rule.bytes_re if isinstance(text, bytes) else rule.str_re
        g = rule.group if rule.group <= (rx.groups or 0) else 0
        found += [(*m.span(g), rule.kind) for m in rx.finditer(text)  # type: ignore[arg-type]
                  if m.span(g)[1] > m.span(g)[0] >= 0]
    found.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return merged


def test_the_gated_scan_finds_what_every_expression_everywhere_finds() -> None:
    """The gates and locators only skip work: over code with secrets of every kind put in
    at random places (and next to each other), the spans are those of the plain scan."""
    import random

    from turnback.sharing.redact import _spans

    extra = ["1234567890:" + "A" * 35, "M" + "a" * 24 + ".abcdef." + "b" * 27,
             "0123456789abcdef0123456789abcdef-us12", "XOXB-1-abc", "Token: 'abcdefgh12'",
             "aws_secret = '" + "a" * 40 + "'", "DB_PASSWORD=hunter2hunter2\n",
             "https://bob:pa55word1@example.com/x", "İstanbul token='abcdefgh12'",
             "café € token='abcdefgh12' AKIAIOSFODNN7EXAMPLE"]
    secrets = list(SECRETS.values()) + extra
    words = ["def", "token", "(", ")", ":", "=", "'", "\n", "return", "x1", "AC", "SK",
             "-us", ".", "ghp", "Password", "key", " ", "12345678", "api_key", "://"]
    rnd = random.Random(18)
    for _ in range(300):
        parts = [rnd.choice(words) for _ in range(rnd.randrange(5, 80))]
        for _ in range(rnd.randrange(0, 4)):
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(secrets))
        text = "".join(parts)
        assert _spans(text) == _plain_spans(text), text
        data = text.encode()
        assert _spans(data) == _plain_spans(data), text
