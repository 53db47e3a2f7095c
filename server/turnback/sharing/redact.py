"""Secrets taken out of what a push sends: file contents and session text.

The detectors are those of Yelp's ``detect-secrets`` (pinned in pyproject.toml): one
maintained list of service-specific patterns (AWS, GitHub, GitLab, Slack, Stripe, OpenAI,
PyPI, npm, SendGrid, Twilio, Azure, Discord, Telegram, Square, Mailchimp, JWT, passwords in
URLs), updated as providers change token formats. Its scanner is not used as is: it reads
line by line through every plugin (about 0.25 ms a line here: minutes for a code base), it
reports what it matched, not where, and for a private key only its first line. So its
patterns are compiled here into one expression run over whole contents, and two rules are
added: a whole PEM/OpenSSH private key block, and a quoted or dotenv value of a variable
named like a secret (``PASSWORD``, ``TOKEN``, ``API_KEY``, ``SECRET`` …).

Left out on purpose: the high-entropy detectors (they match every hash in a lock file, and a
redacted lock file breaks the teammate's build), the keyword scanner (see above), and the
Artifactory, Cloudant, IBM and SoftLayer patterns (they match ordinary identifiers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

MARK = "[redacted:{}]"

_SERVICE_DETECTORS = (
    "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "DiscordBotTokenDetector",
    "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector", "MailchimpDetector",
    "NpmDetector", "OpenAIDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
    "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
)
# patterns whose secret is one group, not the whole match (the rest around it is kept)
_SECRET_GROUP = {"BasicAuthDetector": 1, "NpmDetector": 1}
# the secret-like word starts the match (a leading [A-Za-z0-9_]* would be tried at every
# position: 0.9 s a MB); what stands before it in the name does not matter
_NAME = r"(?i:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Za-z0-9_]*"
_OWN: tuple[tuple[str, str, int, int], ...] = (
    ("Private Key",
     r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----.*?-----END[A-Z0-9 ]{0,40} PRIVATE "
     r"KEY( BLOCK)?-----", re.S, 0),
    ("Private Key", r"PuTTY-User-Key-File-[23]:.*?Private-MAC: [0-9a-f]+", re.S, 0),
    ("Secret Keyword", _NAME + r"[\"']?[ \t]*[:=][ \t]*[\"']([^\s\"'\\]{8,200})[\"']", 0, 1),
    ("Secret Keyword", _NAME + r"=([^\s\"'#]{8,200})[ \t]*$", re.M, 1),
)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # the detector's name for it, e.g. "AWS Access Key"
    line: int  # 1-based line of the content it was found in


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    str_re: re.Pattern[str]
    bytes_re: re.Pattern[bytes]
    group: int


@cache
def _rules() -> tuple[_Rule, ...]:
    # here, not at import: detect-secrets costs ~0.3 s to import, and only a push needs it
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    rules = []
    plugin: Any
    for kind, plugin in get_mapping_from_secret_type_to_class().items():
        if plugin.__name__ not in _SERVICE_DETECTORS:
            continue
        for rx in plugin().denylist:
            flags = rx.flags & (re.I | re.S | re.M | re.X)
            rules.append(_Rule(kind, re.compile(rx.pattern, flags),
                               re.compile(rx.pattern.encode(), flags),
                               _SECRET_GROUP.get(plugin.__name__, 0)))
    for kind, pattern, flags, group in _OWN:
        rules.append(_Rule(kind, re.compile(pattern, flags), re.compile(pattern.encode(), flags),
                           group))
    return tuple(rules)


@cache
def _prefilter_bytes() -> re.Pattern[bytes]:
    """Cheap literals one of which every rule's match contains: most files have none."""
    words = [b"AKIA", b"ASIA", b"ABIA", b"ACCA", b"A3T", b"AccountKey=", b"://", b"gh", b"gl",
             b"GR1348941", b"eyJ", b"-us", b"_authToken", b"T3BlbkFJ", b"pypi-", b"SG.", b"xox",
             b"hooks.slack", b"sq0csp-", b"k_live_", b"AC", b"SK", b"PRIVATE KEY", b"PuTTY",
             b"[A-Za-z0-9]{23,25}\\.", b"\\d{8,10}:"]
    names = (b"secret", b"token", b"password", b"passwd", b"api_key", b"apikey", b"access_key",
             b"accesskey", b"private_key", b"privatekey")
    literal = [re.escape(w) if not w.startswith(b"[") and not w.startswith(b"\\") else w
               for w in words]
    return re.compile(b"|".join(literal) + b"|(?i:" + b"|".join(names) + b")")


def _spans(text: str | bytes) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for rule in _rules():
        rx = rule.bytes_re if isinstance(text, bytes) else rule.str_re
        for m in rx.finditer(text):  # type: ignore[arg-type]
            g = rule.group if rule.group <= (rx.groups or 0) else 0
            start, end = m.span(g)
            if start >= 0 and end > start:
                found.append((start, end, rule.kind))
    found.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if merged and start < merged[-1][1]:  # overlapping matches: one redaction
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


def redact_bytes(data: bytes) -> tuple[bytes, list[Finding]]:
    """File content with every secret replaced by ``[redacted:<kind>]``; binary content
    (a NUL in its first 8 KiB) is left as it is."""
    if b"\0" in data[:8192] or not _prefilter_bytes().search(data):
        return data, []
    spans = _spans(data)
    if not spans:
        return data, []
    out, findings, pos = [], [], 0
    for start, end, kind in spans:
        out += [data[pos:start], MARK.format(kind).encode()]
        findings.append(Finding(kind, data.count(b"\n", 0, start) + 1))
        pos = end
    out.append(data[pos:])
    return b"".join(out), findings


def redact_text(text: str) -> tuple[str, list[Finding]]:
    if not _prefilter_bytes().search(text.encode("utf-8", "surrogatepass")):
        return text, []
    spans = _spans(text)
    if not spans:
        return text, []
    out, findings, pos = [], [], 0
    for start, end, kind in spans:
        out += [text[pos:start], MARK.format(kind)]
        findings.append(Finding(kind, text.count("\n", 0, start) + 1))
        pos = end
    out.append(text[pos:])
    return "".join(out), findings
