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


# Where each rule can match, so that most contents never meet its expression (run over
# whole contents, several of these cost seconds a MB: `[MNO][…]{23,25}\.` and `\d{8,10}:`
# start a match at almost every position, and the case-blind names at every letter).
# gate: literals one of which every match contains (in lower case when `lower`);
# locator: a cheap expression every match contains; the rule's own expression is then tried
# only around each place it is found, from `back` before it to `forward` after its end; or
# (forward -1, locator "") anchored at each place a gate word is found.
_GATES: dict[str, tuple[tuple[str, ...], bool, str | None, int, int]] = {
    # pattern prefix -> (gate, lower, locator, back, forward)
    "(?:A3T": (("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), False, None, 0, 0),
    "aws": (("aws",), True, None, 0, 0),
    "AccountKey": (("AccountKey=",), False, None, 0, 0),
    "://": (("://",), False, None, 0, 0),
    "[MNO]": ((".",), False, r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}", 26, 0),
    "(ghp": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False, None, 0, 0),
    "(glpat": (("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"), False, None, 0, 0),
    "GR1348941": (("GR1348941",), False, None, 0, 0),
    "glcbt": (("glcbt-",), False, None, 0, 0),
    "glimt": (("glimt-",), False, None, 0, 0),
    "glptt": (("glptt-",), False, None, 0, 0),
    "glagent": (("glagent-",), False, None, 0, 0),
    "gloas": (("gloas-",), False, None, 0, 0),
    "eyJ": (("eyJ",), False, "", 0, -1),
    "[0-9a-z]{32}-us": (("-us",), False, r"-us[0-9]", 32, 1),
    "\\/\\/": (("_authToken",), False, None, 0, 0),
    "sk-": (("T3BlbkFJ",), False, None, 0, 0),
    "pypi-": (("pypi-",), False, None, 0, 0),
    "SG\\.": (("SG.",), False, None, 0, 0),
    "xox": (("xox",), True, None, 0, 0),
    "https://hooks": (("hooks.slack.com",), True, None, 0, 0),
    "sq0csp": (("sq0csp-",), False, None, 0, 0),
    "(?:r|s)k_live": (("k_live_",), False, None, 0, 0),
    "\\d{8,10}:": ((":",), False, r":[0-9A-Za-z_-]{35}", 10, 0),
    "AC[": (("AC",), False, None, 0, 0),
    "SK[": (("SK",), False, None, 0, 0),
    "-----BEGIN": (("PRIVATE KEY",), False, None, 0, 0),
    "PuTTY": (("PuTTY-User-Key-File-",), False, None, 0, 0),
    "(?i:SECRET": (("secret", "token", "passw", "api_key", "apikey", "access_key", "accesskey",
                    "private_key", "privatekey"), True,
                   "", 0, -1),
}


# Where a match of a rule with a closing line must end: at the last place its closing literal
# stands, plus what may follow it there. An opening line with no closing one after it made its
# lazy `.*?` run to the content's end, once per opening line: a file of 4,000 "-----BEGIN RSA
# PRIVATE KEY-----" lines (128 KB) took 1.6 s of CPU, 1 MB about 100 s (a cloned repository's
# file, converted by every first push). Searched only up to that end, each opening line is met
# by the scan of the one before it or not tried at all.
_ENDS: dict[str, tuple[str, str]] = {
    # pattern prefix -> (closing literal, what may follow it within the match)
    "-----BEGIN": ("-----END", r"[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----"),
    "PuTTY": ("Private-MAC: ", r"[0-9a-f]*"),
}


# Rules anchored at their gate words whose match starts with a run of these characters (the
# gate word among them): a gate word further in the run ends its run where the first one's
# ends, so once a match from the first fails, those are not tried (they fail as it did). Tried
# anyway, "token0token0…" cost time with the square of its length (64 KB: 7.9 s of CPU), and
# "eyJAeyJA…" (a JSON Web Token's start, each one scanned to the run's end) 0.55 s.
_RUNS: dict[str, str] = {  # pattern prefix (ours) or whole pattern (detect-secrets') -> run
    "(?i:SECRET": r"[A-Za-z0-9_]*",  # _NAME
    r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?": r"[A-Za-z0-9=_-]*",
}


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    str_re: re.Pattern[str]
    bytes_re: re.Pattern[bytes]
    group: int
    gate: tuple[str, ...]  # one of these is in every match (lower case when `lower`)
    gate_bytes: tuple[bytes, ...]
    lower: bool
    locator: re.Pattern[str] | None  # in every match, at most `back` after its start
    locator_bytes: re.Pattern[bytes] | None
    back: int
    forward: int
    end: tuple[str, re.Pattern[str]] | None = None  # _ENDS
    end_bytes: tuple[bytes, re.Pattern[bytes]] | None = None
    run: re.Pattern[str] | None = None  # _RUNS
    run_bytes: re.Pattern[bytes] | None = None


def _rule(kind: str, pattern: str, flags: int, group: int) -> _Rule:
    gate: tuple[tuple[str, ...], bool, str | None, int, int] | None = None
    for prefix, g in _GATES.items():
        if pattern.startswith(prefix):
            gate = g
            break
    if gate is None:  # a pattern detect-secrets added since: run it everywhere (correct, slow)
        gate = ((), False, None, 0, 0)
    words, lower, locator, back, forward = gate
    end = next((e for prefix, e in _ENDS.items() if pattern.startswith(prefix)), None)
    # a detect-secrets pattern changed by an upgrade gets no run: the equivalence is its shape's
    run = next((r for key, r in _RUNS.items() if pattern == key
                or (key.startswith("(?i:") and pattern.startswith(key))), None)
    return _Rule(kind, re.compile(pattern, flags), re.compile(pattern.encode(), flags), group,
                 words, tuple(w.encode() for w in words), lower,
                 re.compile(locator) if locator else None,
                 re.compile(locator.encode()) if locator else None, back, forward,
                 (end[0], re.compile(end[1])) if end else None,
                 (end[0].encode(), re.compile(end[1].encode())) if end else None,
                 re.compile(run) if run else None, re.compile(run.encode()) if run else None)


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
            rules.append(_rule(kind, rx.pattern, flags,
                               _SECRET_GROUP.get(plugin.__name__, 0)))
    for kind, pattern, flags, group in _OWN:
        rules.append(_rule(kind, pattern, flags, group))
    return tuple(rules)


class _Literals:
    """Every gate literal of every rule, found in one pass over a content (and one over its
    lower case) by an Aho-Corasick automaton: ``ahocorasick-rs`` (pinned), the Python
    binding of the Rust ``aho-corasick`` crate (the one ripgrep uses, with its SIMD
    prefilter). Before it, each of the 49 literals was its own ``find`` pass over the
    content: 42% of a first push went to those and the rules they gate. All occurrences are
    reported (``overlapping``), so what is found is exactly what ``find`` loops would find.
    One-character literals (``.``, ``:``) are in nearly every content: a plain ``in``."""

    def __init__(self, rules: tuple[_Rule, ...]) -> None:
        import ahocorasick_rs  # here, not at import: only a push needs it

        self.exact = sorted({w for r in rules if not r.lower for w in r.gate if len(w) > 1})
        self.lower = sorted({w for r in rules if r.lower for w in r.gate if len(w) > 1})
        self.single = sorted({(w, r.lower) for r in rules for w in r.gate if len(w) == 1})
        self.auto = {(lower, binary): (ahocorasick_rs.BytesAhoCorasick([w.encode() for w in ws])
                                       if binary else ahocorasick_rs.AhoCorasick(ws))
                     for lower, ws in ((False, self.exact), (True, self.lower))
                     for binary in (False, True)}

    def find(self, text: str | bytes, low: str | bytes | None) -> dict[tuple[str, bool], Any]:
        """(literal, in lower case) -> where it starts in ``text`` (sorted), for each literal
        found; one-character literals -> True when present (no positions kept)."""
        binary = isinstance(text, bytes)
        found: dict[tuple[str, bool], Any] = {}
        for lower, words in ((False, self.exact), (True, self.lower)):
            hay = low if lower else text
            if hay is None or not words:
                continue
            for i, start, _end in self.auto[(lower, binary)].find_matches_as_indexes(
                    hay, overlapping=True):  # type: ignore[arg-type]
                found.setdefault((words[i], lower), []).append(start)
        for w, lower in self.single:
            hay = low if lower else text
            if hay is not None and (w.encode() if binary else w) in hay:  # type: ignore[operator]
                found[(w, lower)] = True
        return found


@cache
def _literals() -> _Literals:
    return _Literals(_rules())


# detect-secrets' npm rule: a `//`, then at least one character of the same line, then
# `/:_authToken=` followed by a token. Run as an expression, it is tried from every `//` to its
# line's end: a 64 KB line of `_authToken////////` took 1.8 s of CPU, a 1 MiB one minutes. The
# same matches, found from the places a token can follow (`_NPM_TAIL`): the first `//` of that
# line before it starts the match, which the expression then makes from there once.
_NPM = r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*"
_NPM_TAIL = r"/:_authToken=\s*(?:npm_.|[A-Fa-f0-9-]{36})"
_NPM_TAILS = (re.compile(_NPM_TAIL), re.compile(_NPM_TAIL.encode()))


def _npm_matches(rx: Any, text: Any, g: int) -> list[tuple[int, int]]:
    binary = isinstance(text, bytes)
    tail = _NPM_TAILS[1] if binary else _NPM_TAILS[0]
    lit, opener, nl = ((b"/:_authToken=", b"//", b"\n") if binary
                       else ("/:_authToken=", "//", "\n"))
    out: list[tuple[int, int]] = []
    done = 0
    at = text.find(lit)
    while at >= 0:
        if at >= done and tail.match(text, at) is not None:
            line = text.rfind(nl, 0, at) + 1
            start = text.find(opener, max(line, done), at - 1)  # a character between
            if start >= 0 and (m := rx.match(text, start)) is not None:
                out.append(m.span(g))
                done = m.end()
        at = text.find(lit, at + 1)
    return out


def _matches(rule: _Rule, text: Any, low: Any,
             found: dict[tuple[str, bool], Any]) -> list[tuple[int, int]]:
    """Spans of ``rule``'s matches in ``text``: none when no gate literal of it is in
    ``found`` (``_Literals.find``); else its expression over the whole content when it has
    no locator, or only from just before each place the locator finds, or anchored at each
    place a gate word starts."""
    binary = isinstance(text, bytes)
    rx = rule.bytes_re if binary else rule.str_re
    g = rule.group if rule.group <= (rx.groups or 0) else 0
    hay = low if rule.lower else text
    gated = hay is not None and bool(rule.gate)
    if gated and not any((w, rule.lower) in found for w in rule.gate):
        return []
    out = []
    if rule.forward < 0 and gated:  # anchored at each gate word
        starts = sorted({at for w in rule.gate for at in found.get((w, rule.lower), ())})
        done = 0
        run = rule.run_bytes if binary else rule.run
        for at in starts:
            if at < done:
                continue
            m = rx.match(text, at)
            if m is not None:
                out.append(m.span(g))
                done = m.end()
            elif run is not None and (r := run.match(text, at)) is not None:
                done = r.end()  # _RUNS: the gate words further in this run fail as this did
        return out
    if rule.str_re.pattern == _NPM and rule.str_re.flags & (re.S | re.M) == 0:
        return _npm_matches(rx, text, g)
    locator = rule.locator_bytes if binary else rule.locator
    if locator is None or hay is None:  # (no lower case in the same positions: everywhere)
        endpos = len(text)
        end = rule.end_bytes if binary else rule.end
        if end is not None:  # no match ends past the last closing literal and its tail
            last = text.rfind(end[0])
            if last < 0:
                return out
            tail = end[1].match(text, last + len(end[0]))
            endpos = tail.end() if tail is not None else last + len(end[0])
        for m in rx.finditer(text, 0, endpos):
            out.append(m.span(g))
        return out
    done = 0  # the content before this was searched already
    for hit in locator.finditer(hay):
        if hit.start() < done:
            continue
        # a match ends at most `forward` after the locator's end
        m = rx.search(text, max(done, hit.start() - rule.back), hit.end() + rule.forward)
        if m is not None:
            out.append(m.span(g))
            done = m.end()
    return out


def _spans(text: str | bytes) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    lowered = text.lower()  # bytes: ASCII only, the same positions
    # a str whose lower case is longer ('İ'): no gates in lower case
    low = lowered if len(lowered) == len(text) else None
    literals = _literals().find(text, low)
    for rule in _rules():
        for start, end in _matches(rule, text, low, literals):
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
    if b"\0" in data[:8192]:
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
