"""Making workspace files equal to a checkpoint: the plan, and applying it safely.

The plan is computed from two trees — the safety checkpoint (the workspace as it
is now) and the target — so ignored files, never being in either, are never
touched. Applying removes first (deepest paths first), then writes each file to
a temporary name beside it and renames it into place, all through folder
descriptors that refuse symlinks. Every step is idempotent, which is what lets a
journal finish an interrupted rewind by simply applying the plan again.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from .changes import diff_trees
from .errors import Conflict, Unsafe
from .objects import BLOB, ObjectStore
from .paths import open_dir
from .trees import DIR, LINK, Entry, TreeReader, permissions


@dataclass(slots=True)
class Plan:
    write: dict[str, Entry] = field(default_factory=dict)  # existed, content/mode differs
    create: dict[str, Entry] = field(default_factory=dict)  # absent now
    remove: list[str] = field(default_factory=list)  # present now, absent in the target

    def to_json(self) -> dict[str, object]:
        return {
            "write": {p: list(e) for p, e in self.write.items()},
            "create": {p: list(e) for p, e in self.create.items()},
            "remove": self.remove,
        }

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> Plan:
        w = obj.get("write") or {}
        c = obj.get("create") or {}
        r = obj.get("remove") or []
        assert isinstance(w, dict) and isinstance(c, dict) and isinstance(r, list)
        return cls(
            {p: Entry(*e) for p, e in w.items()},
            {p: Entry(*e) for p, e in c.items()},
            [str(p) for p in r],
        )

    def empty(self) -> bool:
        return not (self.write or self.create or self.remove)


def _selected(path: str, paths: list[str] | None) -> bool:
    if paths is None:
        return True
    return any(path == p or path.startswith(p + "/") for p in paths)


def make_plan(
    trees: TreeReader,
    current: dict[str, Entry],
    target: dict[str, Entry],
    paths: list[str] | None,
    absent: list[str] | None = None,
    partial: bool = False,
) -> Plan:
    """``current``/``target`` are flattened trees (path -> entry)."""
    plan = Plan()
    for path, entry in target.items():
        if not _selected(path, paths):
            continue
        now = current.get(path)
        if now is None:
            plan.create[path] = entry
        elif now != entry:
            plan.write[path] = entry
    if partial:
        # a partial checkpoint knows only some files: remove just the ones it saw absent
        for path in absent or []:
            if path in current and _selected(path, paths):
                plan.remove.append(path)
    else:
        for path in current:
            if path not in target and _selected(path, paths):
                plan.remove.append(path)
    plan.remove.sort(key=lambda p: (-p.count("/"), p))
    return plan


def _remove_empty_folders(dfd: int, name: str) -> bool:
    """Remove folder ``name`` if it holds nothing but folders, recursively; never a file.

    Walks through descriptors without following symlinks (a link is not empty).
    """
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
    try:
        for child in os.listdir(fd):
            if not stat.S_ISDIR(os.lstat(child, dir_fd=fd).st_mode):
                return False
            if not _remove_empty_folders(fd, child):
                return False
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dfd)
    return True


TMP_PREFIX = ".turnback-tmp-"  # a file being written into place; a crash may leave one


class Applier:
    def __init__(self, workspace: str, objects: ObjectStore, fsync: bool) -> None:
        self.workspace = workspace
        self.objects = objects
        self.fsync = fsync

    def apply(self, plan: Plan) -> None:
        root = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for path in plan.remove:
                self._remove(root, path)
            for path, entry in sorted({**plan.write, **plan.create}.items()):
                self._put(root, path, entry)
        finally:
            os.close(root)

    def remove_temps(self, plan: Plan) -> None:
        """Delete the temporary files a killed rewind left beside the files it was writing."""
        folders = {p.rpartition("/")[0] for p in {**plan.write, **plan.create}}
        root = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for folder in sorted(folders):
                try:
                    dfd = open_dir(root, folder.split("/") if folder else [], create=False)
                except (FileNotFoundError, NotADirectoryError, Unsafe):
                    continue
                try:
                    for name in os.listdir(dfd):
                        if name.startswith(TMP_PREFIX):
                            os.unlink(name, dir_fd=dfd)
                finally:
                    os.close(dfd)
        finally:
            os.close(root)

    def _remove(self, root: int, path: str) -> None:
        parts = path.split("/")
        try:
            dfd = open_dir(root, parts[:-1], create=False)
        except (FileNotFoundError, NotADirectoryError, Unsafe):
            # already gone: a re-applied journal may find a file where the folder was
            # (a file <-> folder swap), and nothing is removed through a symlink
            return
        try:
            try:
                os.unlink(parts[-1], dir_fd=dfd)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                pass  # a folder now stands there: its files are removed one by one
        finally:
            os.close(dfd)
        # prune folders the removal emptied, up to the workspace
        for depth in range(len(parts) - 1, 0, -1):
            try:
                pfd = open_dir(root, parts[: depth - 1], create=False)
            except (FileNotFoundError, NotADirectoryError, Unsafe):
                return
            try:
                os.rmdir(parts[depth - 1], dir_fd=pfd)
            except OSError:
                return  # not empty (other or ignored files): keep it
            finally:
                os.close(pfd)

    def _clear_dir(self, dfd: int, name: str, path: str) -> None:
        """A target file replaces a folder: the folder must hold no file by now.

        Empty folders inside it go too: checkpoints do not record empty folders,
        so they are no reason to refuse.
        """
        try:
            if _remove_empty_folders(dfd, name):
                return
            os.rmdir(name, dir_fd=dfd)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise Conflict(
                    f"cannot restore file '{path}': a folder of that name holds files Turnback "
                    "does not track (ignored files); move them away and rewind again"
                ) from None
            raise

    def _put(self, root: int, path: str, entry: Entry) -> None:
        parts = path.split("/")
        dfd = self._parent(root, parts, path)
        name = parts[-1]
        tmp = f"{TMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            try:
                st = os.lstat(name, dir_fd=dfd)
                if stat.S_ISDIR(st.st_mode):
                    self._clear_dir(dfd, name, path)
            except FileNotFoundError:
                pass
            if entry.mode == LINK:
                target = self.objects.get(BLOB, entry.hash)
                os.symlink(target, tmp, dir_fd=dfd)
            else:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                             dir_fd=dfd)
                try:
                    self.objects.copy_blob_to(entry.hash, fd)
                    os.fchmod(fd, permissions(entry.mode))
                    if self.fsync:
                        os.fsync(fd)
                finally:
                    os.close(fd)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
        finally:
            os.close(dfd)

    def _parent(self, root: int, parts: list[str], path: str) -> int:
        """Open the folder that will hold ``path``, turning files in the way into folders."""
        try:
            return open_dir(root, parts[:-1], create=True)
        except FileExistsError:
            pass
        # a tracked file stands where the target has a folder (file <-> folder swap):
        # removals ran first, so whatever is left there is untracked
        raise Conflict(
            f"cannot restore '{path}': a file stands where the checkpoint has a folder; move it "
            "away and rewind again"
        )


def check_conflicts(workspace: str, plan: Plan) -> None:
    """Refuse, before anything is touched, a plan that would stop halfway.

    A file to restore may stand where a folder now holds files the plan does not
    remove (ignored or unselected files), or below something that is not a folder
    and is not removed first.
    """
    removed = set(plan.remove)
    for path in sorted({**plan.write, **plan.create}):
        parts = path.split("/")
        folders_stand = True  # every folder on the way is a real folder now
        for depth in range(1, len(parts)):
            anc = "/".join(parts[:depth])
            try:
                st = os.lstat(os.path.join(workspace, anc))
            except (FileNotFoundError, NotADirectoryError):
                folders_stand = False
                break
            if stat.S_ISDIR(st.st_mode):
                continue
            if anc not in removed:
                if stat.S_ISLNK(st.st_mode):
                    raise Unsafe(f"cannot restore '{path}': '{anc}' is a symlink; refusing to "
                                 "write through it (remove the link and rewind again)")
                raise Conflict(
                    f"cannot restore '{path}': '{anc}' is a file the rewind does not replace; "
                    "move it away (or include it in the paths) and rewind again"
                )
            folders_stand = False
            break
        if not folders_stand:
            continue  # its folders are made afresh: nothing stands at the path (and looking
            # there would follow a symlink the plan removes, maybe out of the workspace)
        full = os.path.join(workspace, path)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISDIR(st.st_mode):
            for dirpath, _dirs, files in os.walk(full):
                for f in files:
                    rel = os.path.relpath(os.path.join(dirpath, f), workspace)
                    if rel not in removed:
                        raise Conflict(
                            f"cannot restore file '{path}': the folder of that name holds "
                            f"'{rel}', which Turnback does not track (ignored files); move it "
                            "away and rewind again"
                        )


def diff_plan(trees: TreeReader, current: str, target: str, sel: list[str] | None) -> Plan:
    """The plan of a whole-checkpoint rewind, from a Merkle diff of the two trees.

    Equal subtrees are skipped unread, so a rewind costs the size of the difference.
    With ``sel``, only the selected paths' subtrees are read (the rest of a damaged
    checkpoint does not matter).
    """
    plan = Plan()
    removed: set[str] = set()
    if sel is None:
        items = list(diff_trees(trees, current, target))
    else:
        items = []
        for p in sel:
            a, b = trees.lookup(current, p), trees.lookup(target, p)
            a_dir = a is not None and a.mode == DIR
            b_dir = b is not None and b.mode == DIR
            if a_dir or b_dir:
                items.extend(diff_trees(trees, a.hash if a_dir and a else None,
                                        b.hash if b_dir and b else None, p + "/"))
            fa = None if a_dir else a
            fb = None if b_dir else b
            if fa != fb:
                items.append((p, fa, fb))
    for path, old, new in items:
        if new is None:
            if path not in removed:
                removed.add(path)
                plan.remove.append(path)
        elif old is None:
            plan.create[path] = new
        else:
            plan.write[path] = new
    plan.remove.sort(key=lambda p: (-p.count("/"), p))
    return plan
