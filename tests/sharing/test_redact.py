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
