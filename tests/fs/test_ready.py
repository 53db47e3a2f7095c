"""``fs/ready``: waits on descriptors numbered past ``select``'s 1,024."""

from __future__ import annotations

import os
import resource

import pytest

from turnback.fs import ready


@pytest.fixture
def high_pipe() -> tuple[int, int]:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        pytest.skip(f"this process may open {soft} descriptors, the test needs 1,200")
    r, w = os.pipe()
    hr, hw = os.dup2(r, 1100), os.dup2(w, 1101)
    os.close(r)
    os.close(w)
    yield hr, hw
    os.close(hr)
    os.close(hw)


def test_a_pipe_numbered_past_1024_is_waited_on(high_pipe: tuple[int, int]) -> None:
    r, w = high_pipe
    assert ready.readable([r], 0) == set()  # nothing written yet: the time runs out
    assert ready.writable(w, 1.0)
    os.write(w, b"x")
    assert ready.readable([r], 5.0) == {r}
