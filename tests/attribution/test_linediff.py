"""The line diff that carries origins: kept and moved lines keep theirs, the rest are new."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnback.attribution.linediff import carry, carry_text, split_lines

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


texts_st = st.lists(st.sampled_from([b"", b"\n", b"}\n", b"x = 1\n", b"x = 1",
                                     b"a much longer line of code here\n",
                                     b"return value_of_something\n", b"\n\n", b"x"]),
                    max_size=20).map(b"".join)


@given(texts_st, texts_st)
def test_carried_from_bytes_is_split_and_carried(old_data: bytes, new_data: bytes) -> None:
    """The head and tail found in the bytes give exactly what splitting both versions and
    diffing their lines gives (lines and origins); the head and tail it names are the old
    version's lines with their origins."""
    old = split_lines(old_data)
    origins = list(range(len(old)))
    new = split_lines(new_data)
    got = carry_text(old_data, old, origins, new_data, NEW)
    assert (got.lines, got.origins) == (new, carry(old, origins, new, NEW))
    assert got.head + got.tail <= min(len(old), len(new))
    assert got.origins[: got.head] == origins[: got.head]
    assert got.origins[len(new) - got.tail :] == origins[len(old) - got.tail :]


def test_carried_from_bytes_keeps_the_old_lines_objects() -> None:
    old_data = b"".join(b"line %d\n" % i for i in range(5000))
    new_data = old_data.replace(b"line 2500\n", b"changed\n")
    old = split_lines(old_data)
    got = carry_text(old_data, old, list(range(5000)), new_data, NEW)
    lines, origins, head, tail = got.lines, got.origins, got.head, got.tail
    assert (head, tail) == (2500, 2499)
    assert lines == split_lines(new_data)
    assert origins == [*range(2500), NEW, *range(2501, 5000)]
    assert lines[0] is old[0] and lines[-1] is old[-1]
