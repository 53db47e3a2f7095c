"""A cache of the code attrs and cattrs generate, so the server starts faster.

Importing ``lsprotocol.types`` makes attrs build some 550 classes, each from
generated source (``__init__``, ``__eq__``, ``__repr__``...), and pygls's
converter has cattrs generate a function for each type it meets. Compiling that
source is about a third of the server's start. The source is the same on every
start for the same library versions, so the compiled code objects are kept in
one file (``marshal``) under the user's cache folder, keyed by the version of
Python and the files of attrs, cattrs, lsprotocol and pygls (path, size, mtime,
inode: another version of a library is other files), and looked up by a hash of
the source. Only the ``compile`` those modules call is replaced: nothing else sees
the cache.

``TURNBACK_CODE_CACHE=0`` turns it off. A cache file that cannot be read or
parsed is ignored (and replaced); one that cannot be written is not kept. Either
way the server compiles as before.
"""

import __future__

import builtins
import contextlib
import hashlib
import logging
import marshal
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

log = logging.getLogger("turnback.server")

ENV = "TURNBACK_CODE_CACHE"
MAGIC = b"TBCODE1\n"  # then a blake2b-256 of the rest, then marshal.dumps({key: code})
_DIGEST = 32
_BODY = len(MAGIC) + _DIGEST
_MAX_ENTRIES = 20_000  # far above what a start needs; a cache that grows past it is dropped
# Each set of library files (a new release, another install) gets its own cache file; one
# unused this long belongs to versions gone from the machine. A file in use is touched at
# most once a day, so its age says when it was last used.
UNUSED_S = 30 * 86_400
TOUCH_S = 86_400

_compile = builtins.compile


class CodeCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._codes: dict[str, CodeType] = {}
        self.hits = 0
        self.misses = 0
        self._saved_misses = 0
        self._load()

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except OSError:
            return
        # marshal trusts its input (damaged bytecode could crash the process when run):
        # only a file whose checksum matches is read.
        head, digest, payload = raw[: len(MAGIC)], raw[len(MAGIC) : _BODY], raw[_BODY:]
        if head != MAGIC or digest != hashlib.blake2b(payload, digest_size=_DIGEST).digest():
            log.debug("code cache %s damaged or of another format; ignoring it", self.path)
            return
        try:
            data = marshal.loads(payload)
        except Exception as exc:
            log.debug("code cache %s unreadable (%s); ignoring it", self.path, exc)
            return
        if isinstance(data, dict) and len(data) <= _MAX_ENTRIES:
            self._codes = {
                k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, CodeType)
            }
            with contextlib.suppress(OSError):
                if time.time() - self.path.stat().st_mtime > TOUCH_S:
                    os.utime(self.path)  # in use: keep it from being pruned

    def compile_for(self, module: ModuleType) -> Any:
        """A ``compile`` for ``module`` that answers from the cache."""
        flags = 0
        for value in vars(module).values():  # the future imports compile() would inherit
            if isinstance(value, __future__._Feature):
                flags |= value.compiler_flag
        tag = f"{module.__name__}:{flags}"

        def compile(  # stands in for the builtin in one module
            source: Any,
            filename: Any,
            mode: str,
            flags_: int = 0,
            dont_inherit: bool = False,
            optimize: int = -1,
        ) -> Any:
            if flags_ or dont_inherit or optimize != -1 or not isinstance(source, str):
                inherit = 0 if dont_inherit else flags
                return _compile(source, filename, mode, flags_ | inherit, True, optimize)
            h = hashlib.blake2b(digest_size=20)
            for part in (tag, str(filename), mode, source):
                h.update(part.encode("utf-8", "surrogatepass"))
                h.update(b"\0")
            key = h.hexdigest()
            code = self._codes.get(key)
            if code is not None:
                self.hits += 1
                return code
            code = _compile(source, filename, mode, flags, True)
            with self._lock:
                self._codes[key] = code
                self.misses += 1
            return code

        return compile

    def save(self) -> None:
        """Write the cache if this process compiled anything new (best effort)."""
        with self._lock:
            if self.misses == self._saved_misses:
                return
            misses, codes = self.misses, dict(self._codes)
        try:
            payload = marshal.dumps(codes)
            data = MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".code-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, ValueError) as exc:
            log.debug("code cache %s not written (%s)", self.path, exc)
            return
        self._saved_misses = misses
        self.prune()

    def prune(self) -> None:
        """Remove the cache files of other library versions left unused for UNUSED_S, and
        temporary files of writers that died (run when a new cache file is written: that
        is when older ones start to go stale)."""
        now = time.time()
        try:
            entries = list(os.scandir(self.path.parent))
        except OSError:
            return
        for entry in entries:
            name = entry.name
            stale = (name.startswith("code-") and name.endswith(".marshal")
                     and entry.path != str(self.path))
            if not (stale or name.startswith(".code-")):
                continue
            with contextlib.suppress(OSError):
                age = now - entry.stat(follow_symlinks=False).st_mtime
                if age > (UNUSED_S if stale else TOUCH_S):
                    os.unlink(entry.path)


_cache: CodeCache | None = None


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "turnback"


def _key(modules: list[ModuleType]) -> str:
    """Python's version and the identity of the files that make the code (a new version of
    a library is new files; ``importlib.metadata`` would cost more than the cache saves)."""
    parts = [sys.version, sys.implementation.cache_tag or ""]
    for module in modules:
        path = getattr(module, "__file__", None) or module.__name__
        try:
            st = os.stat(path)
            parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
        except OSError:
            parts.append(path)
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=10).hexdigest()


def install() -> CodeCache | None:
    """Serve the compiles of attrs and cattrs from the cache; call before importing pygls."""
    global _cache
    if _cache is not None:
        return _cache
    if os.environ.get(ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    try:
        import attr
        import attr._make
        import cattrs
        import cattrs.gen
        import cattrs.gen.typeddicts
        import lsprotocol
        import pygls

        libs = [attr, attr._make, cattrs, cattrs.gen, cattrs.gen.typeddicts, lsprotocol, pygls]
        cache = CodeCache(_cache_dir() / f"code-{_key(libs)}.marshal")
        for module in (attr._make, cattrs.gen, cattrs.gen.typeddicts):
            module.compile = cache.compile_for(module)  # type: ignore[attr-defined]
    except Exception as exc:  # never a reason not to start
        log.debug("code cache not used (%s)", exc)
        return None
    _cache = cache
    return cache


def save() -> None:
    if _cache is not None:
        _cache.save()
