"""Workspace-relative paths: validation, and file-system access that cannot escape.

Opening folders inside the workspace without following a link (every write of a
rewind goes through one) is ``fs/folders.py``'s.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from ..errors import InvalidInput, Unsafe

MAX_NAME = 255


def utf8_text(value: str) -> bool:
    """Whether ``value`` is text UTF-8 can hold. JSON's ``\\ud800`` escape makes a lone
    surrogate, which no file name, stored line or printed answer can take: a label so made
    was stored and then failed ``turnback checkpoints`` (UnicodeEncodeError). ASCII, most
    text, is answered without an encode."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display(rel: str) -> str:
    """A path for people and JSON results: undecodable bytes shown as U+FFFD; so is a
    lone surrogate no file name decodes to (``\\ud800`` in a store file's JSON, planted:
    it raised, and ``turnback checkpoints`` ended in a traceback)."""
    try:
        raw = rel.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = re.sub(_LONE_SURROGATE, "\ufffd", rel).encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "replace")


# surrogates that are no escaped byte (``surrogateescape`` holds byte b as U+DC00 + b,
# b >= 0x80); compiled by ``re`` at its first use (a planted name), not at every import
_LONE_SURROGATE = "[\ud800-\udc7f\udd00-\udfff]"


# C0 controls, DEL and C1 controls (U+009B is a terminal's CSI): one could end a line
# early, move the cursor or recolour what follows, making one name look like others; and
# the bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9), which reorder what a
# terminal shows after them: a label or name could show as another (redteam50)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_QUOTE = re.compile(f'[\x00-\x1f\x7f-\x9f{_BIDI}"\\\\]')
_ESC = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
        "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _ESC.get(c) or "".join(f"\\{b:03o}" for b in c.encode("utf-8"))


def quote(rel: str) -> str:
    """A path for a line of text output, as git's ``core.quotePath`` prints it: a name
    holding a control character, ``"`` or ``\\`` in double quotes, C-escaped
    (``"a\\nb"``); others as they are. JSON output needs none of this (already escaped)."""
    text = display(rel)
    if _QUOTE.search(text) is None:
        return text
    return '"' + _QUOTE.sub(_escape, text) + '"'


def one_line(text: str) -> str:
    """Free text (a label, a message naming a path) for one line of output: control
    characters C-escaped, so it can neither end the line nor drive the terminal."""
    text = display(text)
    return text if _CONTROL.search(text) is None else _CONTROL.sub(_escape, text)


def expand_home(path: str | os.PathLike[str]) -> Path:
    """``~`` and ``~user`` expanded where they can be; otherwise the path as given.

    ``Path.expanduser`` raises for an unknown user (``~nobody-here/x``) or a
    missing home; such a path then simply names a folder called ``~...``, and
    whatever uses it reports it as not found instead of failing unexpectedly.
    """
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


def normalize(path: object, what: str = "path") -> str:
    """A user-supplied relative path as ``a/b/c``; refuse anything that could escape."""
    if not isinstance(path, str) or not path:
        raise InvalidInput(f"{what} must be a non-empty string")
    if "\0" in path:
        raise Unsafe(f"{what} {path!r} contains a NUL byte")
    if "\\" in path:
        raise Unsafe(f"{what} {path!r} contains a backslash; use '/' between folders")
    if path.startswith("/"):
        raise Unsafe(f"{what} {path!r} is absolute; give a path relative to the workspace")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise InvalidInput(f"{what} {path!r} names the workspace itself, not a file in it")
    for p in parts:
        if p == "..":
            raise Unsafe(f"{what} {path!r} is outside the workspace ('..')")
        if len(os.fsencode(p)) > MAX_NAME:
            raise InvalidInput(f"{what} {path!r} has a name longer than {MAX_NAME} bytes")
    return "/".join(parts)


# --- names that are a repository's .git or the store, on some file system ------------------
#
# What git's ``verify_path`` refuses with core.protectHFS and core.protectNTFS (both on in
# git's defaults), after CVE-2014-9390: on macOS and Windows `.GIT`, `.git.`, `.git ::$DATA`,
# `GIT~1` or `.g\u200cit` open the real `.git` folder, so a checkpoint holding
# `.GIT/hooks/pre-commit` would plant a hook that the next `git commit` runs. Refused on
# every platform: a checkpoint made on Linux is rewound on a Mac, a store is cloned.
# Reference: git's path.c (is_hfs_dotgit, is_ntfs_dotgit, is_ntfs_dot_generic).

# code points HFS+ ignores when it compares names (git's next_hfs_char)
_HFS_IGNORED = frozenset(
    [0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
     0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF])
# what ``str.translate`` drops of a name (not a compiled character class: ~2.4 M
# instructions at import, in every fresh CLI process, for a name that is hardly ever met)
_HFS_DROPPED: dict[int, None] = dict.fromkeys(_HFS_IGNORED)
# Each protected folder: its name without the dot, and the six-letter prefix of its NTFS
# 8.3 short name (`.git` -> `GIT~1`, `.turnback` -> `TURNBA~1`).
PROTECTED_FOLDERS = (("git", "git"), ("turnback", "turnba"))
_FIRST = frozenset(".gGtT")
_PREFIXES = (".git", "git~", ".turnback", "turnba~")
_HFS_IGNORED_CHARS = frozenset(chr(c) for c in _HFS_IGNORED)


def _only_dots_spaces(rest: str) -> bool:
    """What NTFS drops from the end of a name (trailing dots and spaces), and ``:`` which
    starts an alternate data stream of the same file (`.git::$INDEX_ALLOCATION`)."""
    return rest.split(":", 1)[0].strip(". ") == ""


def is_protected_name(name: str) -> bool:
    """Whether one path component names a ``.git`` folder or a Turnback store (``.turnback``)
    on some file system Turnback may write to: in any case (Unicode case folding, as APFS
    compares: the Kelvin sign is a ``k``), followed by NTFS's dropped trailing dots and
    spaces or a stream name, as an NTFS short name ``GIT~1`` (``~1`` to ``~4``: git
    refuses ``~1`` only), or with HFS+'s ignored code points anywhere. A little stricter
    than git, never looser."""
    # every alias starts with `.`, `g` or `t` (no other character folds to one of them):
    # the common name costs one comparison (the scan judges every name it meets)
    first = name[:1]
    if first not in _FIRST and first not in _HFS_IGNORED_CHARS:
        return False
    if name.isascii():
        lower = name.lower()
    else:
        lower = unicodedata.normalize("NFC", name.translate(_HFS_DROPPED)).casefold()
    if not lower.startswith(_PREFIXES):
        return False
    for needle, short in PROTECTED_FOLDERS:
        if lower.startswith("." + needle) and _only_dots_spaces(lower[len(needle) + 1:]):
            return True
        n = len(short)
        if (lower.startswith(short + "~") and lower[n + 1:n + 2] in ("1", "2", "3", "4")
                and _only_dots_spaces(lower[n + 2:])):
            return True
    return False


def refuse_protected_path(rel: str, what: str = "path", store_rel: str | None = None) -> None:
    """Raise ``Unsafe`` if writing ``rel`` could write into a ``.git`` folder (any
    repository's) or a Turnback store, in any spelling some file system takes for one, or
    into ``store_rel`` (the store in use, wherever it lives inside the workspace; compared
    case-insensitively). Every path a rewind, undo, restore, import or pull writes goes
    through this before anything is touched."""
    # a backslash separates folders on Windows: `.git\\hooks\\x` is one name on Linux only
    for part in re.split(r"[/\\]", rel):
        if is_protected_name(part):
            raise Unsafe(
                f"{what} '{display(rel)}' goes through '{display(part)}', which is a .git "
                "folder or a Turnback store on macOS or Windows (git refuses it too, "
                "CVE-2014-9390); Turnback never writes there")
    if store_rel is not None:
        folded, sr = rel.casefold(), store_rel.casefold()
        if folded == sr or folded.startswith(sr + "/"):
            raise Unsafe(f"{what} '{display(rel)}' is inside the Turnback store; Turnback "
                         "never writes there")
