"""Which names are one file on the workspace's file system: case and Unicode normalization.

macOS (APFS, HFS+) and Windows (NTFS) are case-insensitive and case-preserving by
default, and APFS takes ``café`` in NFC and in NFD for one name. A checkpoint made on
Linux (or a repository that has both) can hold ``a.txt`` and ``A.txt``: written there,
the second write would land on the first file and the rewind would report a workspace
it did not make. So the store probes each workspace's file system once (``probe``,
recorded in ``config.json``) and a rewind whose result would hold two names that are one
file there is refused before anything is touched (``collisions``).

Case is compared with each character's simple lower case (``İ`` stays one character;
``ß`` is not ``ss``), closer to NTFS's and APFS's tables than Python's full ``casefold``.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from ..record import record
from .leftovers import remove_leftovers_at
from .osflags import O_CLOEXEC, O_NOFOLLOW
from .tempnames import TMP_PREFIX, made_for, temp_name


def _simple_lower(text: str) -> str:
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


# ``init=False``: it writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(frozen=True, init=False)
class NameRules:
    """How the workspace's file system compares names."""

    case_insensitive: bool = False
    normalizing: bool = False  # NFC and NFD spellings of a name are one file

    def __init__(self, case_insensitive: bool = False, normalizing: bool = False) -> None:
        object.__setattr__(self, "case_insensitive", case_insensitive)  # frozen: as
        object.__setattr__(self, "normalizing", normalizing)  # dataclass's own __init__

    @property
    def folds(self) -> bool:
        return self.case_insensitive or self.normalizing

    def key(self, rel: str) -> str:
        """The one spelling every name of the same file shares here."""
        if self.normalizing and not rel.isascii():
            rel = unicodedata.normalize("NFC", rel)
        return _simple_lower(rel) if self.case_insensitive else rel

    def describe(self) -> str:
        both = self.case_insensitive and self.normalizing
        return ("case-insensitive and Unicode-normalizing" if both else
                "case-insensitive" if self.case_insensitive else
                "Unicode-normalizing" if self.normalizing else "case-sensitive")

    def to_json(self) -> dict[str, bool]:
        return {"caseInsensitive": self.case_insensitive,
                "normalizesUnicode": self.normalizing}


EXACT = NameRules()


# what the probe's file stands for: it is made as ``tempnames.temp_name`` of this name,
# ``.tmp-.turnback-probe-éa.<pid>.<8 hex>`` (é in NFC), so that a probe killed between its
# create and its unlink leaves a file the next probe's sweep knows for certain as ours
# (``fs/leftovers.py``: the name down to its mark, the pid gone, our uid, a minute old),
# and the scan never takes one into a checkpoint (``snapshot/ignore.py``)
PROBE_NAME = ".turnback-probe-\u00e9a"
PROBE_PREFIX = TMP_PREFIX + PROBE_NAME


def is_probe(name: str) -> bool:
    """Whether ``name`` is one ``probe`` makes (its name and mark: ``tempnames.made_for``)."""
    return name.startswith(PROBE_PREFIX) and made_for(PROBE_NAME, name)


def probe(folder: Path, sweep: bool = True) -> NameRules | None:
    """Create a probe file in ``folder`` and look it up under its other spellings (upper
    case; NFD). None if no file can be made there (a read-only folder): unknown. Then,
    ``sweep``, the leftovers of probes killed before their unlink are removed there (only
    those certainly ours: a look-alike, another user's, a live process's are left): one
    listing of the folder, +11 system calls, ~0.15 ms at 30 names, ~1 ms at 1,000
    (bench/RESULTS.md, ``trust21``)."""
    name = temp_name(PROBE_NAME)
    path = os.path.join(folder, name)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0o600)
    except OSError:
        return None
    os.close(fd)
    try:
        upper = os.path.join(folder, name.upper())
        nfd = os.path.join(folder, unicodedata.normalize("NFD", name))
        return NameRules(os.path.lexists(upper), os.path.lexists(nfd))
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        if sweep:
            remove_leftovers_at(Path(folder, PROBE_NAME))


# the identity of the folders a probe depends on: the workspace's and the store's device
# and inode numbers (``probe_site``)
Site = tuple[int, int, int, int, int]


def probe_site(workspace: Path, store_root: Path) -> Site:
    """What ``probe_store``'s answer depends on: the file systems of the workspace and the
    store and the folders themselves. A folder is made case-folding (ext4's and f2fs'
    ``chattr +F``) only while empty: made again, it is another inode; the workspace's
    root, where the probe is made when the store is on another file system, may also be
    emptied and filled again in place, which moves its ctime (so does any name made or
    removed in it: a probe more). The store's root is never emptied while in use, and its
    ctime moves at every journal and index write. Two ``stat`` calls, where a probe
    makes and removes a file."""
    ws, store = workspace.stat(), store_root.stat()
    return (ws.st_dev, ws.st_ino, ws.st_ctime_ns, store.st_dev, store.st_ino)


def probe_store(workspace: Path, store_root: Path) -> NameRules | None:
    """``probe`` where it leaves no trace in the workspace: in the store when it is on the
    workspace's file system, else in the workspace itself. Only the workspace is swept of
    killed probes' files: in the store gc removes them, as any ``.tmp-`` file, and a
    rewind's probe there costs no listing."""
    same = store_root.stat().st_dev == workspace.stat().st_dev
    return probe(store_root, sweep=False) if same else probe(workspace)


def _with_folders(paths: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        while p and p not in out:
            out.add(p)
            p = p.rpartition("/")[0]
    return out


def collisions(rules: NameRules, result: Iterable[str], written: Iterable[str]
               ) -> list[list[str]]:
    """Groups of two or more paths (files or their folders) of ``result`` — what the
    workspace is to hold — that are one name under ``rules``, each group touching a path
    of ``written``; sorted, shortest paths first."""
    if not rules.folds:
        return []
    touched = {rules.key(p) for p in _with_folders(written)}
    groups: dict[str, set[str]] = {}
    for p in _with_folders(result):
        k = rules.key(p)
        if k in touched:
            groups.setdefault(k, set()).add(p)
    clashes = [sorted(g) for g in groups.values() if len(g) > 1]
    clashes.sort(key=lambda g: (g[0].count("/"), g))
    # a clash of folders `A`/`a` also makes every pair below them clash: name the top one
    tops: list[list[str]] = []
    for g in clashes:
        if not any(all(any(p.startswith(t + "/") for t in top) for p in g) for top in tops):
            tops.append(g)
    return tops
