"""The plan of a rewind: what to write, create and remove to make the workspace a checkpoint.

It is computed from two trees — the safety checkpoint (the workspace as it is now)
and the target — so ignored files, never being in either, are never touched. A plan
read back from a journal is checked like a user's argument (``Plan.from_json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import StoreDamaged, TurnbackError
from ..fs.paths import normalize
from ..objects.objectstore import is_hash
from ..objects.trees import DIR, VALID_MODES, Entry, TreeReader
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
            back.take(p, self.target(p), self.before.get(p))
        back.order_removals()
        return back

    def take(self, path: str, now: Entry | None, wanted: Entry | None) -> None:
        """Plan ``path`` from what it holds (``now``) to ``wanted`` (None: no file)."""
        self.before[path] = now
        if wanted is None:
            if now is not None:
                self.remove.append(path)
        elif now is None:
            self.create[path] = wanted
        else:
            self.write[path] = wanted

    def order_removals(self) -> None:
        """The removals deepest first, then by name: a folder's files go before it, and
        every plan of the same paths removes in the same order."""
        self.remove.sort(key=lambda p: (-p.count("/"), p))

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
    plan.order_removals()
    return plan


def diff_plan(trees: TreeReader, current: str, target: str, sel: list[str] | None) -> Plan:
    """The plan of a whole-checkpoint rewind, from a Merkle diff of the two trees.

    Equal subtrees are skipped unread, so a rewind costs the size of the difference.
    With ``sel``, only the selected paths' subtrees are read (the rest of a damaged
    checkpoint does not matter).
    """
    plan = Plan()
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
    for path, old, new in dict.fromkeys(items):  # selections that overlap: each path once
        plan.take(path, old, new)
    plan.order_removals()
    return plan
