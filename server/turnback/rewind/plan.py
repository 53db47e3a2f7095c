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

import blake3

from ..errors import Conflict, StoreDamaged, TurnbackError, Unsafe
from ..fs.paths import NotAFolder, normalize, open_dir
from ..objects.objectstore import BLOB, CHUNK, ObjectStore, hash_bytes, is_hash
from ..objects.trees import DIR, FILE_MODES, LINK, VALID_MODES, Entry, TreeReader, permissions
from ..snapshot.changes import diff_trees


@dataclass(slots=True)
class Plan:
    write: dict[str, Entry] = field(default_factory=dict)  # existed, content/mode differs
    create: dict[str, Entry] = field(default_factory=dict)  # absent now
    remove: list[str] = field(default_factory=list)  # present now, absent in the target
    # what each path held when the plan was made (None: no file there); not journaled:
    # recovery reads it from the safety checkpoint, which is what the rewind captured
    before: dict[str, Entry | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "write": {p: list(e) for p, e in self.write.items()},
            "create": {p: list(e) for p, e in self.create.items()},
            "remove": self.remove,
        }

    @classmethod
    def from_json(cls, obj: object, where: str) -> Plan:
        """A plan read from a store file, checked as strictly as a user's argument: every
        path relative, normalised, never ``..``; every entry a file or link of a known mode
        naming an object by its hash. ``StoreDamaged`` names the first fault."""
        if not isinstance(obj, dict):
            raise StoreDamaged(f"{where}: the plan is not a JSON object")
        w, c, r = obj.get("write") or {}, obj.get("create") or {}, obj.get("remove") or []
        if not isinstance(w, dict) or not isinstance(c, dict) or not isinstance(r, list):
            raise StoreDamaged(f"{where}: the plan's write, create and remove are malformed")
        plan = cls()
        for src, dst in ((w, plan.write), (c, plan.create)):
            for p, e in src.items():
                dst[_plan_path(p, where)] = _plan_entry(p, e, where)
        plan.remove = [_plan_path(p, where) for p in r]
        return plan

    def paths(self) -> list[str]:
        return [*self.remove, *self.write, *self.create]

    def target(self, path: str) -> Entry | None:
        """What the plan leaves at ``path`` (None: no file)."""
        return self.write.get(path) or self.create.get(path)

    def reverse(self, paths: list[str] | None = None) -> Plan:
        """The plan that puts ``paths`` (default: all of them) back as they were before."""
        back = Plan()
        for p in self.paths() if paths is None else paths:
            was, now = self.before.get(p), self.target(p)
            back.before[p] = now
            if was is None:
                if now is not None:
                    back.remove.append(p)
            elif now is None:
                back.create[p] = was
            else:
                back.write[p] = was
        back.remove.sort(key=lambda p: (-p.count("/"), p))
        return back

    def empty(self) -> bool:
        return not (self.write or self.create or self.remove)


def _plan_path(value: object, where: str) -> str:
    try:
        rel = normalize(value, "path")
    except TurnbackError as exc:
        raise StoreDamaged(f"{where}: {exc.message}") from None
    if rel != value:
        raise StoreDamaged(f"{where}: path {value!r} is not in normal form ({rel!r})")
    return rel


def _plan_entry(path: str, value: object, where: str) -> Entry:
    if (not isinstance(value, list) or len(value) != 3 or value[0] not in VALID_MODES
            or value[0] == DIR or not isinstance(value[1], str) or not is_hash(value[1])
            or isinstance(value[2], bool) or not isinstance(value[2], int) or value[2] < 0):
        raise StoreDamaged(f"{where}: the entry of {path!r} is not [mode, hash, size]: "
                           f"{str(value)[:80]}")
    return Entry(value[0], value[1], value[2])


ABSENT = None
UNREADABLE = Entry("?", "unreadable", 0)  # equal to no entry a plan holds


def disk_entry(dfd: int, name: str) -> Entry | None:
    """What stands at ``name`` in folder ``dfd`` now, as a tree entry (hashing the file).

    None: nothing a rewind must keep — no file, an (emptied) folder the put clears or
    refuses, or a FIFO or device, which hold no bytes and are replaced as before.
    ``UNREADABLE``: a file that cannot be read, so nothing can vouch for it.
    """
    try:
        st = os.lstat(name, dir_fd=dfd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return UNREADABLE
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(name, dir_fd=dfd)
        except OSError:
            return UNREADABLE
        raw = os.fsencode(target)
        return Entry(LINK, hash_bytes(BLOB, raw), len(raw))
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError:
        return UNREADABLE
    try:
        h = blake3.blake3(BLOB + b"\0")
        size = 0
        while chunk := os.read(fd, CHUNK):
            h.update(chunk)
            size += len(chunk)
        st = os.fstat(fd)
    except OSError:
        return UNREADABLE
    finally:
        os.close(fd)
    return Entry(FILE_MODES[st.st_mode & 0o777], h.hexdigest(), size)


def _same(now: Entry | None, want: Entry | None) -> bool:
    if now is None or want is None:
        return now is want
    return now.mode == want.mode and now.hash == want.hash


class Changed(Conflict):
    """A path changed between the plan and its write: the rewind keeps it and stops."""

    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(f"'{p}'" for p in paths[:5]) + (" …" if len(paths) > 5 else "")
        super().__init__(
            f"{shown} changed while the rewind ran (saved by an editor or an agent); the new "
            "content is kept and the rewind was undone: nothing was lost. Rewind again once "
            "the workspace is quiet")
        self.paths = paths


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
        plan.before[path] = now
    if partial:
        # a partial checkpoint knows only some files: remove just the ones it saw absent
        for path in absent or []:
            if path in current and _selected(path, paths):
                plan.remove.append(path)
    else:
        for path in current:
            if path not in target and _selected(path, paths):
                plan.remove.append(path)
    for path in plan.remove:
        plan.before[path] = current[path]
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
        self.done: list[str] = []

    def apply(self, plan: Plan, *, strict: bool = True) -> list[str]:
        """Make each path of ``plan`` its target, if it still holds what it held before.

        Right before each path is replaced or removed, what stands there is looked at
        again: already the target, it is left; still ``plan.before``, it is replaced; else
        it changed since the plan was made (an editor's save, an agent's write, or a
        journal that does not describe this workspace) and is never overwritten. Strict
        (a rewind being made): that stops the rewind with ``Changed``. Otherwise
        (recovery, roll-back): it is kept, and returned among the paths left as they are.
        ``self.done`` lists the paths changed so far.
        """
        kept: list[str] = []
        self.done = []
        root = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for path in plan.remove:
                if self._check(root, path, None, plan.before.get(path), strict, kept):
                    self._remove(root, path)
                    self.done.append(path)
            for path, entry in sorted({**plan.write, **plan.create}.items()):
                if self._check(root, path, entry, plan.before.get(path), strict, kept):
                    self._put(root, path, entry)
                    self.done.append(path)
        finally:
            os.close(root)
        return kept

    def _check(self, root: int, path: str, want: Entry | None, was: Entry | None,
               strict: bool, kept: list[str]) -> bool:
        """Whether ``path`` is to be written now (see ``apply``)."""
        parts = path.split("/")
        try:
            dfd = open_dir(root, parts[:-1], create=False)
        except (FileNotFoundError, NotADirectoryError, NotAFolder):
            now = None  # its folder is gone: no file stands there (a symlink: Unsafe)
        else:
            try:
                now = disk_entry(dfd, parts[-1])
            finally:
                os.close(dfd)
        if _same(now, want):
            return False  # already so (a journal applied again)
        if _same(now, was):
            return True
        if strict:
            raise Changed([path])
        kept.append(path)
        return False

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


def check_conflicts(workspace: str, plan: Plan, skipped: dict[str, str] | None = None) -> None:
    """Refuse, before anything is touched, a plan that would stop halfway or destroy
    something the safety checkpoint could not capture.

    A file to restore may stand where a folder now holds files the plan does not
    remove (ignored or unselected files), or below something that is not a folder
    and is not removed first; or where the safety checkpoint saw no file, something may
    stand that it could not take (an ignored file, one over the size cap, an unreadable
    one: ``skipped`` says why, by path).
    """
    removed = set(plan.remove)
    uncaptured: list[str] = []
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
        except OSError:
            uncaptured.append(path)  # cannot even be looked at: nothing vouches for it
            continue
        if path in plan.create and not stat.S_ISDIR(st.st_mode):
            dfd = os.open(os.path.dirname(full) or ".", os.O_RDONLY | os.O_DIRECTORY)
            try:
                now = disk_entry(dfd, os.path.basename(full))
            finally:
                os.close(dfd)
            if now is not None and not _same(now, plan.create[path]):
                uncaptured.append(path)
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
    if uncaptured:
        why = skipped or {}
        shown = "; ".join(
            f"'{p}' ({why.get(p) or 'ignored, or made after the safety checkpoint'})"
            for p in uncaptured[:5]) + (f"; and {len(uncaptured) - 5} more"
                                        if len(uncaptured) > 5 else "")
        raise Conflict(
            f"the rewind would overwrite what the safety checkpoint could not capture: {shown}. "
            "Nothing was changed: move those files away (or rewind other paths) and rewind "
            "again"
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
        plan.before[path] = old
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
