"""The line diff that carries origins: kept and moved lines keep theirs, the rest are new."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnback.attribution.linediff import carry, split_lines

NEW = -1


def test_split_lines_keeps_a_last_line_without_an_end() -> None:
    assert split_lines(b"") == []
    assert split_lines(b"a\nb") == [b"a", b"b"]
    assert split_lines(b"a\nb\n") == [b"a", b"b"]
    assert split_lines(b"\n") == [b""]


def test_an_insert_in_the_middle_of_a_long_file() -> None:
    old = [b"line %d" % i for i in range(5000)]
    new = [*old[:2500], b"inserted", *old[2500:]]
    got = carry(old, list(range(5000)), new, NEW)
    assert got == [*range(2500), NEW, *range(2500, 5000)]


def test_a_moved_block_keeps_its_origins_a_short_one_does_not() -> None:
    old = [b"a", b"def moved_function(x):", b"    return x + 1", b"b", b"}"]
    new = [b"a", b"b", b"def moved_function(x):", b"    return x + 1"]
    # the diff keeps the longer run in place: the function; `b` then moved, alone too
    # short to count as a move, so it is new
    assert carry(old, [0, 1, 2, 3, 4], new, NEW) == [0, NEW, 1, 2]
    old2 = [b"def moved_function(x):", b"    return x + 1", b"a", b"b", b"c", b"d"]
    new2 = [b"a", b"b", b"c", b"d", b"def moved_function(x):", b"    return x + 1"]
    assert carry(old2, [0, 1, 2, 3, 4, 5], new2, NEW) == [2, 3, 4, 5, 0, 1]
    assert carry([b"x", b"}"], [0, 1], [b"}", b"x"], NEW) in ([NEW, 0], [1, NEW])


lines_st = st.lists(st.sampled_from([b"", b"}", b"x = 1", b"a much longer line of code here",
                                     b"return value_of_something"]), max_size=30)


@given(lines_st, lines_st)
def test_carried_origins_point_at_equal_lines_once_each(old: list[bytes], new: list[bytes]
                                                        ) -> None:
    got = carry(old, list(range(len(old))), new, NEW)
    assert len(got) == len(new)
    used = [k for k in got if k != NEW]
    assert len(used) == len(set(used))
    assert all(old[k] == new[j] for j, k in enumerate(got) if k != NEW)
    if old == new:
        assert got == list(range(len(old)))
