"""``records.record`` behaves as ``@dataclass(slots=True)`` does (its ``__eq__``,
``__repr__`` and ``__hash__`` made without compiling source), and costs less to build."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from turnback.models import Checkpoint
from turnback.record import record


def _pair(frozen: bool) -> tuple[Any, Any]:
    """The same class made by ``record`` and by ``dataclass``."""

    def body() -> type:
        class Item:
            name: str
            size: int = 0
            tags: tuple[str, ...] = field(default_factory=tuple)
            secret: str = field(default="", repr=False, compare=False)
        return Item

    return record(frozen=frozen)(body()), dataclass(slots=True, frozen=frozen)(body())


@pytest.mark.parametrize("frozen", [False, True])
def test_eq_repr_hash_as_dataclass(frozen: bool) -> None:
    mine, theirs = _pair(frozen)
    for args, kw in ((("a",), {}), (("b", 3), {"tags": ("x",), "secret": "s"})):
        a, b = mine(*args, **kw), theirs(*args, **kw)
        assert repr(a) == repr(b)
        assert (a == mine(*args, **kw)) is (b == theirs(*args, **kw)) is True
        # a field left out of compare and repr is left out here too
        assert a == mine(*args, **{**kw, "secret": "other"})
        assert "secret" not in repr(a)
        assert (a == mine("z")) is (b == theirs("z")) is False
        assert a.__eq__(b) is NotImplemented and b.__eq__(a) is NotImplemented
        assert a != b  # two classes: never equal, as two dataclasses are not
        assert dataclasses.fields(a) and [f.name for f in dataclasses.fields(a)] == [
            f.name for f in dataclasses.fields(b)]
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.replace(a, size=9).size == 9
        assert not hasattr(a, "__dict__")  # slots, as before
    if frozen:
        assert hash(mine("a", 1)) == hash(theirs("a", 1)) == hash(mine("a", 1, secret="q"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            mine("a").size = 2
    else:
        assert mine.__hash__ is None and theirs.__hash__ is None
        with pytest.raises(TypeError):
            hash(mine("a"))


def test_a_subclass_compares_its_own_fields_and_not_its_parents_instances() -> None:
    @record
    class Base:
        a: int

    @record
    class Sub(Base):
        b: int = 0

    assert Sub(1, 2) == Sub(1, 2) and Sub(1, 2) != Sub(1, 3)
    assert Sub(1, 0) != Base(1) and Base(1) != Sub(1, 0)
    assert repr(Sub(1, 2)) == "test_a_subclass_compares_its_own_fields_and_not_its_parents_" \
        "instances.<locals>.Sub(a=1, b=2)"


def test_a_recursive_value_is_shown_as_dataclass_shows_it() -> None:
    @record
    class Node:
        kids: list[Any]

    @dataclass(slots=True)
    class Same:
        kids: list[Any]

    n, s = Node([]), Same([])
    n.kids.append(n)
    s.kids.append(s)
    assert repr(n).split("(", 1)[1] == repr(s).split("(", 1)[1] == "kids=[...])"


def test_a_model_still_pickles_and_compares() -> None:
    cp = Checkpoint("id1", "l", "ts", "t" * 64, None, None, files=2)
    again = pickle.loads(pickle.dumps(cp))
    assert again == cp and again is not cp
    assert repr(cp).startswith("Checkpoint(id='id1', label='l', ts='ts', ")


def test_building_a_record_compiles_no_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the cut is: ``dataclass`` compiles ``__init__``, ``__eq__`` and ``__repr__``
    (three calls of ``exec``); ``record`` leaves it ``__init__`` alone (one), and one more
    (``__setattr__``, ``__delattr__``) each for frozen, where ``dataclass`` adds
    ``__hash__`` too."""
    calls: list[str] = []
    real = dataclasses._create_fn  # type: ignore[attr-defined]

    def counted(name: str, *a: Any, **k: Any) -> Any:
        calls.append(name)
        return real(name, *a, **k)

    monkeypatch.setattr(dataclasses, "_create_fn", counted)
    _pair(False)
    assert calls == ["__init__", "__init__", "__repr__", "__eq__"]
    calls.clear()
    _pair(True)
    assert sorted(calls[:3]) == ["__delattr__", "__init__", "__setattr__"]
    assert sorted(calls[3:]) == ["__delattr__", "__eq__", "__hash__", "__init__", "__repr__",
                                 "__setattr__"]


def test_init_false_takes_the_class_own_init_and_checks_it_takes_the_fields() -> None:
    """``@record(init=False)``: the class's own ``__init__``, compiled with its module; a
    class whose ``__init__`` does not take its fields, in order, or that has none, is
    refused when it is made (a field added and forgotten there fails at import)."""

    @record(init=False)
    class Own:
        name: str
        tags: list[str] = field(default_factory=list)

        def __init__(self, name: str, tags: list[str] | None = None) -> None:
            self.name = name
            self.tags = [] if tags is None else tags

    assert Own.__init__.__code__.co_filename == __file__
    assert Own("a") == Own("a", []) and Own("a") != Own("a", ["x"])
    assert repr(Own("a", ["x"])).endswith("Own(name='a', tags=['x'])")
    assert dataclasses.replace(Own("a"), name="b") == Own("b")
    assert dataclasses.asdict(Own("a")) == {"name": "a", "tags": []}
    assert not hasattr(Own("a"), "__dict__")

    with pytest.raises(TypeError, match=r"Missed: its __init__ takes \('name',\), not its "
                                        r"fields \('name', 'size'\)"):
        @record(init=False)
        class Missed:
            name: str
            size: int = 0

            def __init__(self, name: str) -> None:
                self.name = name

    with pytest.raises(TypeError, match=r"Bare \(init=False\) defines no __init__"):
        @record(init=False)
        class Bare:
            name: str


def _no_op_records() -> list[tuple[type, tuple[Any, ...]]]:
    """The records a fresh no-op checkpoint builds that write their own ``__init__`` (cold37),
    each with arguments for the fields that have no default."""
    from turnback.fs.jsonl import Line, Problem
    from turnback.fs.namefold import NameRules
    from turnback.sessions.files import ReadLog, _EventLines
    from turnback.snapshot.gitexclude import GitExcludes
    from turnback.snapshot.nodes import DirNode, Looked, Pending, ScanResult

    st = __import__("os").stat(__file__)
    return [(Checkpoint, ("i", "l", "t", "h", None, None)), (ScanResult, ("h", 1, 2)),
            (Pending, ("r", 1)), (Looked, ("r", 1, st)), (DirNode, ()),
            (Problem, ("f", 1, "m")), (Line, (1, 0, {}, 2)), (GitExcludes, ("", [], [], "k")),
            (NameRules, ()), (_EventLines, (1,)), (ReadLog, (None, 1, 2, 3, 4, 5, b""))]


@pytest.mark.parametrize("cls, args", _no_op_records(), ids=lambda v: getattr(v, "__name__", ""))
def test_a_no_op_checkpoint_compiles_no_init_of_its_records(cls: type, args: tuple[Any, ...]
                                                            ) -> None:
    """The records a fresh no-op checkpoint builds (instantiating each four times at most)
    write their own ``__init__``: ``dataclass`` compiled one for each at every start, ~14 M
    instructions of the no-op's parent on its critical path (cold37). Their defaults and
    factories are the fields' own."""
    assert cls.__init__.__code__.co_filename != "<string>"  # type: ignore[misc]
    made = cls(*args)
    for f, given in zip(dataclasses.fields(made), args, strict=False):
        assert getattr(made, f.name) is given
    for f in dataclasses.fields(made)[len(args):]:
        want = (f.default if f.default is not dataclasses.MISSING
                else f.default_factory())  # type: ignore[misc]
        got = getattr(made, f.name)
        assert got == want and type(got) is type(want), f.name
        if f.default is dataclasses.MISSING:
            assert got is not cls(*args).__getattribute__(f.name)  # a new one each time
