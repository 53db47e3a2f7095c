"""What differs between two states: trees compared as Merkle trees, then line counts.

Equal subtree hashes are skipped without being read, so comparing two
checkpoints costs the size of the difference, not of the workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..errors import StoreDamaged
from ..fs.paths import quote
from ..objects.trees import DIR, LINK, MAX_DEPTH, MAX_FILES, Entry, TreeReader

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import Change  # imported where one is made: a checkpoint makes none

Reader = Callable[[str, Entry], bytes]  # (path, entry) -> content
LARGE = 2_000_000  # above this many bytes, line counts use a cheaper matcher


def diff_trees(
    trees: TreeReader, a: str | None, b: str | None, prefix: str = "", depth: int = 0,
    seen: list[int] | None = None,
) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """(path, old entry, new entry) for every file that differs, sorted by path.

    Bounded as ``TreeReader.walk`` is (``MAX_DEPTH``, ``MAX_FILES`` entries read).
    """
    if a == b:
        return
    if depth >= MAX_DEPTH:  # also what ends a tree that contains itself
        raise StoreDamaged(f"trees nest folders more than {MAX_DEPTH} deep at '{prefix}'; the "
                           "store is damaged: run 'turnback fsck'")
    ta = trees.get(a) if a else {}
    tb = trees.get(b) if b else {}
    if seen is None:
        seen = [0]
    seen[0] += len(ta) + len(tb)
    if seen[0] > 2 * MAX_FILES:
        raise StoreDamaged(f"the trees compared hold more than {MAX_FILES} files (a damaged or "
                           "crafted tree); run 'turnback fsck'")
    # only the names whose entries differ, found in C: a small change touches one or two of
    # a folder's ~50 names (a Python loop over all of them was most of a rewind's plan)
    for name in sorted({n for n, _ in ta.items() ^ tb.items()}):
        ea, eb = ta.get(name), tb.get(name)
        path = prefix + name
        a_dir = ea is not None and ea.mode == DIR
        b_dir = eb is not None and eb.mode == DIR
        if a_dir or b_dir:
            yield from diff_trees(
                trees, ea.hash if a_dir and ea else None, eb.hash if b_dir and eb else None,
                path + "/", depth + 1, seen,
            )
        if not a_dir or not b_dir:
            fa = ea if not a_dir else None
            fb = eb if not b_dir else None
            if fa is not None or fb is not None:
                yield path, fa, fb


def is_binary(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def count_lines(old: bytes, new: bytes) -> tuple[int, int]:
    """(lines added, lines removed) as a unified diff would show them."""
    a = old.splitlines()
    b = new.splitlines()
    import difflib  # here: a checkpoint compares nothing

    sm = difflib.SequenceMatcher(None, a, b, autojunk=len(old) + len(new) > LARGE)
    added = removed = 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def describe(path: str, old: Entry | None, new: Entry | None, read_old: Reader,
             read_new: Reader) -> Change:
    status = "added" if old is None else "deleted" if new is None else "modified"
    kind = "symlink" if (new or old) is not None and (new or old).mode == LINK else "file"  # type: ignore[union-attr]
    a = read_old(path, old) if old is not None else b""
    b = read_new(path, new) if new is not None else b""
    binary = is_binary(a) or is_binary(b)
    added = removed = 0
    if not binary:
        added, removed = count_lines(a, b)
    mode_changed = old is not None and new is not None and old.mode != new.mode
    from ..results import Change

    return Change(path, status, binary, added, removed, kind, mode_changed)


def unified(path: str, old: bytes | None, new: bytes | None, a_label: str, b_label: str) -> str:
    """A unified diff of one file; binary files get a one-line note, as git prints."""
    if (old is not None and is_binary(old)) or (new is not None and is_binary(new)):
        a_name, b_name = quote(f"{a_label}/{path}"), quote(f"{b_label}/{path}")
        return f"Binary files {a_name} and {b_name} differ\n"
    a = (old or b"").decode("utf-8").splitlines(keepends=True)
    b = (new or b"").decode("utf-8").splitlines(keepends=True)
    import difflib

    lines = difflib.unified_diff(
        a, b,
        # quoted as git quotes them: a name holding a newline cannot forge diff lines
        fromfile=quote(f"{a_label}/{path}") if old is not None else "/dev/null",
        tofile=quote(f"{b_label}/{path}") if new is not None else "/dev/null",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
