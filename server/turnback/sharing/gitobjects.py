"""Git objects without a process per object: names computed here (SHA-1 of git's
``<type> <size>\\0<content>``), blobs written through one ``git fast-import``, trees through
one ``git mktree -z --batch`` (whose answers are checked against the names computed here),
and objects read back through one ``git cat-file --batch``.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import IO, NamedTuple

from ..errors import StoreDamaged
from .gitrun import GitFailed, git_binary, run

GIT_FILE = "100644"
GIT_EXEC = "100755"
GIT_LINK = "120000"
GIT_DIR = "40000"
GIT_SUBMODULE = "160000"


def blob_name(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class GitEntry(NamedTuple):
    mode: str  # GIT_FILE, GIT_EXEC, GIT_LINK, GIT_DIR (as git writes them)
    name: bytes
    sha: str


def _sort_key(e: GitEntry) -> bytes:
    # git orders a folder as if its name ended with '/'
    return e.name + b"/" if e.mode == GIT_DIR else e.name


def encode_tree(entries: Iterable[GitEntry]) -> bytes:
    return b"".join(e.mode.encode() + b" " + e.name + b"\0" + bytes.fromhex(e.sha)
                    for e in sorted(entries, key=_sort_key))


def tree_name(data: bytes) -> str:
    return hashlib.sha1(b"tree %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def decode_tree(data: bytes, where: str) -> list[GitEntry]:
    """Entries of a git tree object, as bytes; a malformed one is ``StoreDamaged``."""
    out = []
    i = 0
    while i < len(data):
        sp = data.find(b" ", i)
        nul = data.find(b"\0", sp + 1) if sp >= 0 else -1
        if sp < 0 or nul < 0 or nul + 21 > len(data):
            raise StoreDamaged(f"git tree {where} is malformed")
        mode = data[i:sp].decode("ascii", "replace")
        out.append(GitEntry(mode, data[sp + 1:nul], data[nul + 1:nul + 21].hex()))
        i = nul + 21
    return out


class ObjectWriter:
    """Writes blobs (streamed into one ``git fast-import``: one pack) and trees (one
    ``git mktree``) into a bare repository. Nothing is visible before ``flush``."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._blobs: set[str] = set()
        self._trees: dict[str, list[GitEntry]] = {}  # in the order they were made
        self.blob_bytes = 0
        self.blobs = 0

    def blob(self, data: bytes) -> str:
        name = blob_name(data)
        if name in self._blobs:
            return name
        self._blobs.add(name)
        if self._proc is None:
            # --depth=0: fast-import would try each blob as a delta of the one before it (an
            # unrelated file, mostly: 15,000 files, 1.4 CPU s more and a 0.7% larger push).
            # One process, one pack: the push's pack-objects takes two whole objects of one
            # pack as already tried against each other, so a first push sends them whole and
            # does no delta search (two packs, measured: 1.6 CPU s more for the push, 0.1%
            # fewer bytes); a file's later versions land in later packs and become deltas.
            self._proc = subprocess.Popen(
                [git_binary(), "--git-dir", str(self.git_dir), "fast-import", "--quiet",
                 "--depth=0", "--done"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
        assert self._proc.stdin is not None
        try:
            # three writes, not one: a concatenation would copy every file's content again
            self._proc.stdin.write(b"blob\ndata %d\n" % len(data))
            self._proc.stdin.write(data)
            self._proc.stdin.write(b"\n")
        except BrokenPipeError:
            self._finish_blobs()  # raises with what git said
        self.blob_bytes += len(data)
        self.blobs += 1
        return name

    def tree(self, entries: list[GitEntry]) -> str:
        name = tree_name(encode_tree(entries))
        if name not in self._trees:
            self._trees[name] = entries
        return name

    def flush(self) -> None:
        """Write what was queued: blobs first (trees name them), then trees children first."""
        self._finish_blobs()
        if self._trees:
            self._mktree(self._trees)
            self._trees = {}

    def _finish_blobs(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None and proc.stderr is not None
        try:
            proc.stdin.write(b"done\n")
            proc.stdin.close()
        except BrokenPipeError:
            pass
        err = proc.stderr.read()
        proc.stderr.close()
        if proc.wait() != 0:
            raise GitFailed("git fast-import failed: " + err.decode("utf-8", "replace").strip())

    def abort(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for f in (self._proc.stdin, self._proc.stderr):
                if f is not None:
                    # closing stdin flushes what is buffered into the killed process: its
                    # BrokenPipeError replaced the error that aborted the push ("turnback:
                    # Broken pipe" for a store missing an object)
                    try:
                        f.close()
                    except OSError:
                        pass
            self._proc = None

    def _mktree(self, trees: dict[str, list[GitEntry]]) -> None:
        # children are queued before their parents (built bottom-up), and mktree checks
        # that every entry it is given exists: feed them in that order
        records = []
        empty = tree_name(b"")
        if empty in trees:  # mktree --batch reads an empty record as the end of the input
            run(["hash-object", "-t", "tree", "-w", "--stdin"], git_dir=self.git_dir, input=b"",
                what="git hash-object")
            trees = {k: v for k, v in trees.items() if k != empty}
            if not trees:
                return
        for entries in trees.values():
            lines = [e.mode.encode() + (b" tree " if e.mode == GIT_DIR else b" blob ")
                     + e.sha.encode() + b"\t" + e.name + b"\0" for e in entries]
            records.append(b"".join(lines) + b"\0")
        proc = run(["mktree", "-z", "--batch"], git_dir=self.git_dir, input=b"".join(records),
                   what="git mktree")
        got = proc.stdout.decode().split()
        want = list(trees)
        if got != want:
            raise GitFailed("git mktree named the trees otherwise than expected "
                            f"({len(got)} answers for {len(want)} trees)")


class ObjectReader:
    """``git cat-file --batch`` kept open: sizes and types first, then content."""

    def __init__(self, git_dir: Path) -> None:
        self._proc = subprocess.Popen(
            [git_binary(), "--git-dir", str(git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        return self._proc.stdin, self._proc.stdout

    def read(self, rev: str, max_size: int, where: str) -> tuple[str, bytes]:
        """(type, content) of ``rev``; refuse an object larger than ``max_size`` unread."""
        w, r = self._pipes()
        w.write(rev.encode() + b"\n")
        w.flush()
        line = r.readline()
        parts = line.split()
        if len(parts) == 2 and parts[1] == b"missing":
            raise StoreDamaged(f"{where}: git object {rev} is missing")
        if len(parts) != 3:
            raise StoreDamaged(f"{where}: git cat-file said {line[:200]!r}")
        kind, size = parts[1].decode(), int(parts[2])
        if size > max_size:
            self.close()  # its answer cannot be skipped unread: the process goes
            raise StoreDamaged(f"{where} is {size:,} bytes, over the bound of {max_size:,}")
        data = r.read(size)
        r.read(1)  # the newline after the content
        if len(data) != size:
            raise StoreDamaged(f"{where}: git cat-file ended early")
        return kind, data

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                if self._proc.stdin:
                    self._proc.stdin.close()
            except OSError:
                pass
            self._proc.kill()
        self._proc.wait()
        for f in (self._proc.stdout, self._proc.stdin):
            try:
                if f:
                    f.close()
            except OSError:
                pass


def object_sizes(git_dir: Path, revs: list[str]) -> dict[str, tuple[str, int]]:
    """rev -> (type, size) for every rev git has (one ``cat-file --batch-check``)."""
    if not revs:
        return {}
    proc = run(["cat-file", "--batch-check=%(objecttype) %(objectsize)"], git_dir=git_dir,
               input="".join(r + "\n" for r in revs).encode(), what="git cat-file")
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    out = {}
    for rev, line in zip(revs, lines, strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[rev] = (parts[0], int(parts[1]))
    return out


class Commit(NamedTuple):
    tree: str
    parents: list[str]
    message: bytes


def parse_commit(data: bytes, where: str) -> Commit:
    """Tree, parents and message of a git commit object; a malformed one is refused."""
    head, sep, message = data.partition(b"\n\n")
    tree = ""
    parents = []
    for line in head.split(b"\n") if sep else []:
        key, _, value = line.partition(b" ")
        text = value.decode("ascii", "replace")
        if key == b"tree" and not tree and _is_sha(text):
            tree = text
        elif key == b"parent" and _is_sha(text):
            parents.append(text)
        elif key in (b"tree", b"parent"):
            tree = ""
            break
    if not tree:
        raise StoreDamaged(f"{where}: git commit is malformed")
    return Commit(tree, parents, message)


def _is_sha(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


class ChainWriter:
    """Commits on one line of history (each the next one's parent), written through one
    ``git fast-import``: one process however many checkpoints a push adds."""

    def __init__(self, git_dir: Path, scratch_ref: str, parent: str | None) -> None:
        self.git_dir = git_dir
        self.ref = scratch_ref
        self.parent = parent
        self._stream: list[bytes] = [b"reset " + scratch_ref.encode() + b"\n"]
        if parent is not None:
            self._stream.append(b"from " + parent.encode() + b"\n")
        self._stream.append(b"\n")
        self.count = 0

    def add(self, tree: str, message: bytes, who: str, when: int) -> int:
        """Queue a commit of ``tree`` after the previous one; its mark (read by ``write``)."""
        self.count += 1
        sig = b"%s %d +0000\n" % (who.encode("utf-8", "replace"), when)
        self._stream += [b"commit ", self.ref.encode(), b"\nmark :%d\n" % self.count,
                         b"author ", sig, b"committer ", sig,
                         b"data %d\n" % len(message), message, b"\n",
                         b"M 040000 ", tree.encode(), b' ""\n\n']
        return self.count

    def write(self, marks: Path) -> list[str]:
        """Write the queued commits; their names, in the order added."""
        if not self.count:
            return []
        marks.unlink(missing_ok=True)
        run(["fast-import", "--quiet", "--done", f"--export-marks={marks}"],
            git_dir=self.git_dir, input=b"".join(self._stream) + b"done\n",
            what="git fast-import (checkpoint commits)")
        found = {}
        for line in marks.read_text().splitlines():
            mark, _, sha = line.partition(" ")
            found[mark] = sha
        marks.unlink(missing_ok=True)
        names = [found.get(f":{n}", "") for n in range(1, self.count + 1)]
        if not all(_is_sha(n) for n in names):
            raise GitFailed("git fast-import did not name every checkpoint commit")
        return names
