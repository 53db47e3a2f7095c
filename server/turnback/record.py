"""``record``: ``@dataclass(slots=True)`` with the same ``__eq__``, ``__repr__`` and
``__hash__``, for less at import.

``dataclass`` writes each method it adds as source text and compiles it: ~0.5 M
instructions each for ``__eq__`` and ``__repr__`` (and ``__hash__`` when frozen), of
~2.2 M a class. A fresh ``turnback checkpoint`` builds about twenty such classes before
it can work, on its critical path (bench/RESULTS.md, cold27). Here those three methods are
closures over the class's fields, compiled once with this module, and behave as
``dataclass``'s do: ``__eq__`` compares the compared fields of two instances of the very
same class (``NotImplemented`` otherwise), ``__repr__`` is ``Name(field=value!r, ...)``
of the shown fields (``...`` for a recursion), ``__hash__`` is None unless ``frozen``
(then the hash of the compared fields). ``__init__`` (its signature, defaults and
factories) and ``frozen``'s guard are still ``dataclass``'s own.

``dataclass`` writes and compiles ``__init__`` too: ~0.8 M instructions a class, ~14 M of
a fresh no-op checkpoint's parent for the fifteen classes it builds and instantiates at
most four times each (bench/RESULTS.md, cold37). ``@record(init=False)``: the class writes
its own ``__init__`` (compiled once, into its ``.pyc``), taking the fields that
``dataclass`` would, in their order; checked here when the class is made, so that a field
added to the class and not to its ``__init__`` fails at import, naming both.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, overload

T = TypeVar("T")

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_kwargs: object) -> Callable[[T], T]:
        return lambda fn: fn


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The values of ``names`` of an instance, as a tuple (of none or one too)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda _obj: ()


def _finish(cls: type[T], frozen: bool, init: bool) -> type[T]:
    every: tuple[Field[Any], ...] = fields(cls)  # type: ignore[arg-type]
    if not init:
        _check_own_init(cls, tuple(f.name for f in every if f.init))
    compared = _getter(tuple(f.name for f in every if f.compare))
    shown = tuple(f.name for f in every if f.repr)
    values = _getter(shown)

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(compared(self) == compared(other))
        return NotImplemented

    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(shown, values(self), strict=True))
        return f"{self.__class__.__qualname__}({inner})"

    def __hash__(self: object) -> int:
        return hash(compared(self))

    for fn in (__eq__, __repr__, __hash__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__repr__ = __repr__  # type: ignore[method-assign]
    cls.__hash__ = __hash__ if frozen else None  # type: ignore[method-assign,assignment]
    return cls


def _check_own_init(cls: type, names: tuple[str, ...]) -> None:
    """That ``cls`` (``init=False``) defines ``__init__`` itself, taking exactly ``names``
    (its fields, in order) after ``self``, none of them positional-only."""
    own = cls.__dict__.get("__init__")
    code = getattr(own, "__code__", None)
    if code is None:
        raise TypeError(f"record {cls.__qualname__} (init=False) defines no __init__")
    took = code.co_varnames[1: code.co_argcount + code.co_kwonlyargcount]
    if took != names or code.co_posonlyargcount > 1:
        raise TypeError(f"record {cls.__qualname__}: its __init__ takes {took}, not its "
                        f"fields {names}")


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, frozen: bool = False, init: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False,
           init: bool = True) -> type[T] | Callable[[type[T]], type[T]]:
    """``@dataclass(slots=True[, frozen=True][, init=False])``, its ``__eq__``, ``__repr__``
    and ``__hash__`` made here (see the module's docstring)."""

    def wrap(c: type[T]) -> type[T]:
        made = dataclass(slots=True, frozen=frozen, eq=False, repr=False, init=init)(c)
        return _finish(made, frozen, init)

    return wrap if cls is None else wrap(cls)
