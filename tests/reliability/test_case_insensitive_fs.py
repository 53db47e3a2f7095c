"""On a real case-insensitive, normalization-insensitive file system (a FUSE passthrough
that folds names as APFS does, ``tests/casefs.py``): the probe sees it, a rewind to a
checkpoint holding two names that are one file there is refused before anything changes,
and case-only and NFC/NFD-only renames round-trip. Skipped, saying why, where FUSE is not
available."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from casefs_mount import mounted, why_not
from turnback import Store
from turnback.errors import Conflict, Unsafe
from turnback.fs.namefold import NameRules, probe
from turnback.objects.objectstore import BLOB
from turnback.objects.trees import Entry
from turnback.rewind.apply import Applier
from turnback.rewind.plan import Plan
from wsutil import picture, write

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(backing, mount): one folder, seen case-sensitively and case-insensitively."""
    backing = tmp_path / "backing"
    backing.mkdir()
    with mounted(backing, tmp_path / "mnt") as mnt:
        yield backing, mnt


def test_the_probe_sees_each_file_system(both: tuple[Path, Path]) -> None:
    backing, mnt = both
    assert probe(backing) == NameRules(False, False)
    assert probe(mnt) == NameRules(True, True)
    assert os.listdir(mnt) == []  # the probe file is gone


def test_the_probe_is_recorded_per_device(both: tuple[Path, Path]) -> None:
    backing, mnt = both
    Store.open(backing).close()
    cfg = orjson.loads((backing / ".turnback" / "config.json").read_bytes())
    assert cfg["filesystem"]["caseInsensitive"] is False
    with Store.open(mnt) as store:  # the same store seen through the mount: probed again
        assert store.names == NameRules(True, True)
    cfg = orjson.loads((backing / ".turnback" / "config.json").read_bytes())
    assert cfg["filesystem"] == {"device": os.stat(mnt).st_dev, "caseInsensitive": True,
                                 "normalizesUnicode": True}


def test_two_names_that_are_one_file_are_refused_before_anything_changes(
        both: tuple[Path, Path]) -> None:
    """The issue's report: the rewind said success and left a.txt holding A.txt's bytes."""
    backing, mnt = both
    write(backing, "a.txt", "lower\n")
    write(backing, "A.txt", "upper\n")
    write(backing, "d/x.txt", "x\n")
    with Store.open(backing) as linux:  # a checkpoint made where both can exist
        cp = linux.checkpoint()
    os.unlink(backing / "A.txt")
    write(backing, "a.txt", "edited\n")
    write(backing, "new.txt", "new\n")
    before = picture(backing)
    with Store.open(mnt) as store, pytest.raises(Conflict) as err:
        store.rewind(cp.id)
    msg = err.value.message
    assert "'A.txt' and 'a.txt'" in msg and "case-insensitive" in msg
    assert f"turnback show {cp.id} A.txt" in msg and "nothing was changed" in msg
    assert picture(backing) == before
    with Store.open(mnt) as store:  # one path of it is fine
        store.rewind(cp.id, ["d"])
        assert (mnt / "a.txt").read_text() == "edited\n"


def test_a_case_only_rename_round_trips(both: tuple[Path, Path]) -> None:
    backing, mnt = both
    write(mnt, "README.md", "one\n")
    with Store.open(mnt) as store:
        cp = store.checkpoint()
        os.rename(mnt / "README.md", mnt / "readme.md")
        write(mnt, "readme.md", "two\n")
        store.rewind(cp.id)
        assert sorted(os.listdir(backing)) == [".turnback", "README.md"]
        assert (backing / "README.md").read_text() == "one\n"
        store.undo()
        assert sorted(os.listdir(backing)) == [".turnback", "readme.md"]
        assert (backing / "readme.md").read_text() == "two\n"


def test_an_nfc_nfd_rename_round_trips(both: tuple[Path, Path]) -> None:
    backing, mnt = both
    nfc, nfd = "caf\u00e9.txt", unicodedata.normalize("NFD", "caf\u00e9.txt")
    write(mnt, nfc, "one\n")
    with Store.open(mnt) as store:
        cp = store.checkpoint()
        os.rename(mnt / nfc, mnt / nfd)
        write(mnt, nfd, "two\n")
        assert sorted(os.listdir(backing)) == [".turnback", nfd]
        store.rewind(cp.id)
        assert sorted(os.listdir(backing)) == [".turnback", nfc]
        assert (backing / nfc).read_text() == "one\n"
        store.undo()
        assert sorted(os.listdir(backing)) == [".turnback", nfd]
        assert (backing / nfd).read_text() == "two\n"


def test_no_spelling_of_dot_git_reaches_the_real_hooks(both: tuple[Path, Path]) -> None:
    """The issue's hook: a checkpoint made where `.GIT` is its own folder does not take it,
    and a plan naming it (a crafted tree, a forged journal, a pull) is refused on the mount,
    where `.GIT/hooks/pre-commit` is the repository's real hook."""
    backing, mnt = both
    write(backing, ".git/HEAD", "ref: refs/heads/main\n")
    write(backing, ".GIT/hooks/pre-commit", "#!/bin/sh\necho owned\n", exec_=True)
    write(backing, "ok.txt", "ok\n")
    with Store.open(backing) as linux:
        cp = linux.checkpoint()
        assert sorted(linux.trees.flatten(cp.tree)) == ["ok.txt"]
    os.unlink(backing / ".GIT/hooks/pre-commit")
    with Store.open(mnt) as store:
        h = store.objects.put(BLOB, b"#!/bin/sh\necho owned\n")
        for spelling in (".GIT", "GIT~1", ".git.", ".G\u200cit"):
            plan = Plan()
            plan.create[f"{spelling}/hooks/pre-commit"] = Entry("x", h, 21)
            with pytest.raises(Unsafe):
                Applier(str(mnt), store.objects, False).apply(plan)
    assert not (backing / ".git" / "hooks").exists()


def test_a_planted_config_claiming_exact_names_does_not_let_a_rewind_fold(
        both: tuple[Path, Path]) -> None:
    """config.json is a store file anyone who can write the workspace can write: one that
    records this file system as case-sensitive must not switch the check off."""
    backing, mnt = both
    write(backing, "a.txt", "lower\n")
    write(backing, "A.txt", "upper\n")
    with Store.open(backing) as linux:
        cp = linux.checkpoint()
    os.unlink(backing / "A.txt")
    write(backing, "a.txt", "edited\n")
    Store.open(mnt).close()  # records the mount's rules, then the attacker rewrites them
    path = backing / ".turnback" / "config.json"
    cfg = orjson.loads(path.read_bytes())
    cfg["filesystem"] = {"device": os.stat(mnt).st_dev, "caseInsensitive": False,
                         "normalizesUnicode": False}
    path.write_bytes(orjson.dumps(cfg))
    before = picture(backing)
    with Store.open(mnt) as store:
        assert store.names == NameRules(False, False)  # what the planted file says
        with pytest.raises(Conflict) as err:
            store.rewind(cp.id)
    assert "'A.txt' and 'a.txt'" in err.value.message
    assert picture(backing) == before


def test_a_folding_mount_over_the_workspace_is_probed_again_by_a_process_that_probed(
        tmp_path: Path) -> None:
    """A process keeps its name probe while the workspace and the store are the same
    folders (``probe_site``): a case-folding file system mounted over the workspace's path
    afterwards (the store, named by the user, elsewhere) is another device, so the next
    rewind probes again and refuses the two names, where the kept "exact" would have let it
    write ``A.txt`` over ``a.txt``."""
    ws, backing = tmp_path / "ws", tmp_path / "backing"
    write(ws, "a.txt", "lower\n")
    write(ws, "A.txt", "upper\n")
    backing.mkdir()
    store = Store.open(ws, store_dir=tmp_path / "store")
    try:
        cp = store.checkpoint()
        write(ws, "a.txt", "edited\n")
        store.rewind(cp.id)  # probed: exact names, kept
        assert store.names == NameRules(False, False)
        write(backing, "a.txt", "edited\n")
        with mounted(backing, ws):
            before = picture(backing)
            with pytest.raises(Conflict) as err:
                store.rewind(cp.id)
            assert "'A.txt' and 'a.txt'" in err.value.message
            assert store.names == NameRules(True, True)
            assert picture(backing) == before
    finally:
        store.close()
