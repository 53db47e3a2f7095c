"""Every spelling of ``.git`` and of the store that some file system opens as the real one
(git's ``is_hfs_dotgit`` / ``is_ntfs_dotgit``, CVE-2014-9390) is refused, on every platform:
in what a checkpoint takes and in what a rewind writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
from turnback.fs.paths import is_protected_name, refuse_protected_path
from turnback.objects.objectstore import BLOB
from turnback.objects.trees import Entry
from turnback.rewind.apply import Applier
from turnback.rewind.plan import Plan
from wsutil import write

ALIASES = [
    ".git", ".GIT", ".Git", ".gIT",
    ".git.", ".git ", ".git. . ", ".git::$INDEX_ALLOCATION", ".git:stream",  # NTFS
    "git~1", "GIT~1", "Git~2", "git~4 .",  # NTFS 8.3 short names
    ".g\u200cit", "\u200d.git", ".git\ufeff", ".\u202egit", ".gi\u206at",  # HFS+ ignored
    ".turnback", ".TurnBack", ".turnback.", "TURNBA~1", "turnba~3",
    ".turnbac\u212a",  # the Kelvin sign folds to k (APFS's Unicode case folding)
]
ORDINARY = [
    ".github", ".gitignore", ".gitkeep", ".git-blame-ignore-revs", "git", "git~5", "git~10",
    "GIT~1x", "a.git", "x.git.", ".gi", "git~", ".turnbackignore", ".turnback-tmp-1-0123abcd",
    "turnback", "turnba~5", "café", "\u200c", "README.md",
]


@pytest.mark.parametrize("name", ALIASES)
def test_every_alias_of_git_or_the_store_is_protected(name: str) -> None:
    assert is_protected_name(name)
    with pytest.raises(Unsafe) as err:
        refuse_protected_path(f"sub/{name}/hooks/pre-commit", "path")
    assert name in err.value.message or "\u200c" in name or "\ufeff" in name


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_are_not(name: str) -> None:
    assert not is_protected_name(name)
    refuse_protected_path(f"sub/{name}")


def test_a_backslash_is_a_separator_for_the_check() -> None:
    """On Windows `.git\\hooks\\x` is a path into .git; on Linux it is one name."""
    with pytest.raises(Unsafe):
        refuse_protected_path("a/.git\\hooks\\pre-commit")


def test_the_store_in_use_is_refused_in_any_case() -> None:
    with pytest.raises(Unsafe):
        refuse_protected_path("Data/Store/x", store_rel="data/store")
    refuse_protected_path("data/storex", store_rel="data/store")


def test_a_checkpoint_never_takes_an_alias(ws: Path, store: Store) -> None:
    for rel in (".GIT/hooks/pre-commit", "GIT~1/config", ".git./x", "sub/.Git/HEAD",
                ".TURNBACK/config.json", "kept.txt", ".github/workflows/ci.yml"):
        write(ws, rel, "x\n")
    cp = store.checkpoint()
    files = sorted(store.trees.flatten(cp.tree))
    assert files == [".github/workflows/ci.yml", "kept.txt"]


def test_the_applier_refuses_a_plan_into_an_alias_before_touching_anything(
        ws: Path, store: Store) -> None:
    """The last gate: whoever made the plan (a crafted tree, a pulled checkpoint)."""
    h = store.objects.put(BLOB, b"#!/bin/sh\necho owned\n")
    plan = Plan()
    plan.create["a.txt"] = Entry("f", h, 21)
    plan.create[".GIT/hooks/pre-commit"] = Entry("x", h, 21)
    with pytest.raises(Unsafe, match=r"\.GIT"):
        Applier(str(ws), store.objects, False).apply(plan)
    assert not (ws / "a.txt").exists()
    assert not (ws / ".GIT").exists()
