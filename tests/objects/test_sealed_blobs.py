"""A pack's blobs compressed on another thread while more objects come (``seal_blobs``)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from turnback.objects import packs
from turnback.objects.objectstore import BLOB, TREE, ObjectStore


def _held() -> tuple[Callable[[Callable[[], bytes]], Future[bytes]], Callable[[], None]]:
    """A ``submit`` whose jobs wait until ``release()``: the sealed block is still being
    compressed while the test goes on."""
    pool = ThreadPoolExecutor(max_workers=1)
    gate = Future[None]()

    def submit(job: Callable[[], bytes]) -> Future[bytes]:
        def held() -> bytes:
            gate.result()
            return job()
        return pool.submit(held)

    def release() -> None:
        gate.set_result(None)
        pool.shutdown(wait=True)

    return submit, release


def test_sealed_block_is_written_before_later_ones(tmp_path: Path) -> None:
    objs = ObjectStore(tmp_path / "objects")
    submit, release = _held()
    with objs.batch(fsync=False):
        first = [objs.put(BLOB, b"first %d" % i) for i in range(5)]
        objs.seal_blobs(submit)
        objs.seal_blobs(submit)  # one at a time: the second does nothing
        later = [objs.put(BLOB, b"later %d" % i) for i in range(5)]
        tree = objs.put(TREE, b"")
        # read back while the sealed block is still compressing: it waits for it
        release()
        assert objs.get(BLOB, first[2]) == b"first 2"
    again = ObjectStore(tmp_path / "objects")  # a new process: the index alone
    for i, n in enumerate(first):
        assert again.get(BLOB, n) == b"first %d" % i
    for i, n in enumerate(later):
        assert again.get(BLOB, n) == b"later %d" % i
    assert again.get(TREE, tree) == b""
    assert again.verify(first[0]) is None


def test_a_block_filled_after_sealing_waits_for_the_sealed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packs, "BLOCK_RAW", 64)  # every few objects close a block
    objs = ObjectStore(tmp_path / "objects")
    submit, release = _held()
    with objs.batch(fsync=False):
        sealed = objs.put(BLOB, b"s" * 10)
        objs.seal_blobs(submit)
        release()
        more = [objs.put(BLOB, b"m %d " % i * 10) for i in range(10)]
    again = ObjectStore(tmp_path / "objects")
    assert again.get(BLOB, sealed) == b"s" * 10
    for i, n in enumerate(more):
        assert again.get(BLOB, n) == b"m %d " % i * 10


def test_an_aborted_batch_leaves_no_pack(tmp_path: Path) -> None:
    objs = ObjectStore(tmp_path / "objects")
    submit, release = _held()
    with pytest.raises(RuntimeError), objs.batch(fsync=False):
        objs.put(BLOB, b"x" * 100)
        objs.seal_blobs(submit)
        release()
        raise RuntimeError("the scan failed")
    assert not list((objs.root / "pack").glob("*.pack"))
