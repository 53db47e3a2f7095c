"""A plan removes the deepest paths first, then by name (a folder's files before it): the
plan made from two flattened trees and the plan that puts one back (``Plan.reverse``, a
roll-back's) say it with one rule, ``Plan.order_removals`` (tidy31)."""

from __future__ import annotations

from turnback.objects.trees import FILE as REGULAR
from turnback.objects.trees import Entry
from turnback.rewind.plan import make_plan

FILE = Entry(REGULAR, "0" * 64, 1)
PATHS = ["z.txt", "a/x.txt", "a/b/c.txt", "b.txt", "a/b/a.txt"]
ORDER = ["a/b/a.txt", "a/b/c.txt", "a/x.txt", "b.txt", "z.txt"]


def test_a_plan_and_its_reverse_remove_deepest_first() -> None:
    removing = make_plan(None, {p: FILE for p in PATHS}, {}, None)  # type: ignore[arg-type]
    assert removing.remove == ORDER
    creating = make_plan(None, {}, {p: FILE for p in PATHS}, None)  # type: ignore[arg-type]
    assert sorted(creating.create) == sorted(PATHS) and creating.remove == []
    assert creating.reverse().remove == ORDER
    assert creating.reverse(list(reversed(PATHS))).remove == ORDER
