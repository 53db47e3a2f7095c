"""The cache of attrs/cattrs generated code: same code, and never a reason not to start."""

from __future__ import annotations

import marshal
import os
import time
import types
from pathlib import Path

from turnback.server.codecache import CodeCache

SOURCE = "def f(x: int) -> int:\n    return x + 1\n"


def _module(future: bool) -> types.ModuleType:
    m = types.ModuleType("fake_attrs_module")
    if future:
        exec("from __future__ import annotations", vars(m))
    return m


def _run(code: object) -> types.FunctionType:
    ns: dict[str, object] = {}
    exec(code, ns)  # type: ignore[arg-type]
    fn = ns["f"]
    assert isinstance(fn, types.FunctionType)
    return fn


def test_cached_code_is_reused_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "c" / "code.marshal"
    first = CodeCache(path)
    compile_ = first.compile_for(_module(future=True))
    f = _run(compile_(SOURCE, "<gen f>", "exec"))
    assert f(1) == 2 and f.__annotations__ == {"x": "int", "return": "int"}  # future inherited
    assert (first.hits, first.misses) == (0, 1)
    first.save()
    second = CodeCache(path)
    g = _run(second.compile_for(_module(future=True))(SOURCE, "<gen f>", "exec"))
    assert g(41) == 42 and (second.hits, second.misses) == (1, 0)
    plain = second.compile_for(_module(future=False))(SOURCE, "<gen f>", "exec")
    assert _run(plain).__annotations__ == {"x": int, "return": int}  # another module, own flags


def test_caches_of_other_versions_are_pruned_once_unused(tmp_path: Path) -> None:
    month_ago = time.time() - 40 * 86_400
    old = tmp_path / "code-0ldversion.marshal"  # a version not used for 40 days
    recent = tmp_path / "code-0therinstall.marshal"  # another install, used yesterday
    dead_tmp = tmp_path / ".code-abc123"  # a writer that died
    for p, mtime in ((old, month_ago), (recent, time.time() - 86_400), (dead_tmp, month_ago)):
        p.write_bytes(b"x")
        os.utime(p, (mtime, mtime))
    other = tmp_path / "notes.txt"
    other.write_text("not ours")
    os.utime(other, (month_ago, month_ago))
    cache = CodeCache(tmp_path / "code-current.marshal")
    cache.compile_for(_module(False))(SOURCE, "<gen f>", "exec")
    cache.save()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "code-0therinstall.marshal", "code-current.marshal", "notes.txt"]
    # a cache in use is touched when read, so its age says when it was last used
    current = tmp_path / "code-current.marshal"
    os.utime(current, (month_ago, month_ago))
    assert CodeCache(current).compile_for(_module(False))(SOURCE, "<gen f>", "exec")
    assert time.time() - current.stat().st_mtime < 60


def test_corrupt_or_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    for junk in (b"", b"not marshal at all", marshal.dumps([1, 2]), marshal.dumps({"k": 1})):
        path.write_bytes(junk)
        cache = CodeCache(path)
        assert _run(cache.compile_for(_module(False))(SOURCE, "<gen f>", "exec"))(1) == 2
        cache.save()
    assert CodeCache(path).compile_for(_module(False)) is not None
    # a good file with one byte changed (a bit flip on disk) is not read: no hit
    good = path.read_bytes()
    assert good.startswith(b"TBCODE1\n") and CodeCache(path).compile_for(_module(False))
    warm = CodeCache(path)
    warm.compile_for(_module(False))(SOURCE, "<gen f>", "exec")
    assert warm.hits == 1
    flipped = bytearray(good)
    flipped[-5] ^= 0x40
    path.write_bytes(bytes(flipped))
    damaged = CodeCache(path)
    assert _run(damaged.compile_for(_module(False))(SOURCE, "<gen f>", "exec"))(1) == 2
    assert (damaged.hits, damaged.misses) == (0, 1)
    blocked = tmp_path / "file"
    blocked.write_bytes(b"")
    cache = CodeCache(blocked / "sub" / "code.marshal")  # its folder cannot be made
    _run(cache.compile_for(_module(False))(SOURCE, "<gen f>", "exec"))
    cache.save()  # no error


def test_server_version_is_the_package_version() -> None:
    import re

    import turnback
    from turnback.server.app import VERSION

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    m = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE)
    assert m is not None and VERSION == turnback.__version__ == m.group(1)
