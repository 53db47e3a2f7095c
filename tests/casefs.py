"""A case-insensitive, case-preserving, normalization-insensitive file system for the tests:
a FUSE passthrough (mfusepy) over a folder that looks every name up by its folded spelling
(NFC, lower case), as APFS does. Run as a program: ``python casefs.py BACKING MOUNTPOINT``
(foreground; ``fusermount3 -u MOUNTPOINT`` ends it).

Only what the store and the tests use is implemented; a name the backing folder holds
twice under one spelling (made there directly) resolves to the first in sorted order, as
a real case-insensitive file system never shows both.
"""

from __future__ import annotations

import errno
import os
import sys
import unicodedata
from typing import Any

import mfusepy as fuse


def fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).lower()


class CaseFolding(fuse.Operations):  # type: ignore[misc]
    use_ns = True

    def __init__(self, backing: str) -> None:
        self.backing = os.path.realpath(backing)

    # --- names -----------------------------------------------------------------------
    def _real(self, path: str, *, last_literal: bool = False) -> str:
        """The backing path of ``path``: each component matched by its folded spelling
        (the last one taken as given if absent, or if ``last_literal``)."""
        real = self.backing
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            candidate = os.path.join(real, part)
            last = i == len(parts) - 1
            if not (last and last_literal) and not os.path.lexists(candidate):
                try:
                    names = sorted(os.listdir(real))
                except OSError:
                    names = []
                match = next((n for n in names if fold(n) == fold(part)), None)
                if match is not None:
                    candidate = os.path.join(real, match)
            real = candidate
        return real

    # --- attributes and folders ------------------------------------------------------
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        try:
            st = os.lstat(self._real(path))
        except OSError as exc:
            raise fuse.FuseOSError(exc.errno) from None
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime_ns",
                "st_mtime_ns", "st_ctime_ns", "st_ino")
        out = {k: getattr(st, k) for k in keys}
        for k in ("st_atime", "st_mtime", "st_ctime"):
            out[k] = out.pop(k + "_ns")
        return out

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._real(path))]

    def access(self, path: str, amode: int) -> None:
        if not os.access(self._real(path), amode):
            raise fuse.FuseOSError(errno.EACCES)

    def readlink(self, path: str) -> str:
        return os.readlink(self._real(path))

    def mkdir(self, path: str, mode: int) -> None:
        self._call(os.mkdir, self._real(path), mode)

    def mknod(self, path: str, mode: int, dev: int) -> None:
        self._call(os.mknod, self._real(path), mode, dev)  # FIFOs, for the scan's tests

    def rmdir(self, path: str) -> None:
        self._call(os.rmdir, self._real(path))

    def unlink(self, path: str) -> None:
        self._call(os.unlink, self._real(path))

    def symlink(self, target: str, source: str) -> None:
        self._call(os.symlink, source, self._real(target))

    def rename(self, old: str, new: str) -> None:
        src = self._real(old)
        dst = self._real(new)
        if (os.path.lexists(src) and os.path.lexists(dst)
                and os.path.samestat(os.lstat(src), os.lstat(dst))):
            # `README.md` -> `readme.md`: one file, its spelling changes (case-preserving)
            dst = os.path.join(os.path.dirname(dst), os.path.basename(new))
        self._call(os.rename, src, dst)

    def chmod(self, path: str, mode: int) -> None:
        self._call(os.chmod, self._real(path), mode)

    def chown(self, path: str, uid: int, gid: int) -> None:
        self._call(os.chown, self._real(path), uid, gid)

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> None:
        self._call(os.utime, self._real(path), ns=times) if times else self._call(
            os.utime, self._real(path))

    def truncate(self, path: str, length: int, fh: int | None = None) -> None:
        if fh is not None:
            self._call(os.ftruncate, fh, length)
        else:
            self._call(os.truncate, self._real(path), length)

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self.backing)
        return {k: getattr(st, k) for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize",
                                            "f_favail", "f_ffree", "f_files", "f_flag",
                                            "f_frsize", "f_namemax")}

    # --- files -----------------------------------------------------------------------
    def open(self, path: str, flags: int) -> int:
        return int(self._call(os.open, self._real(path), flags & ~os.O_CREAT))

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        real = self._real(path)
        # read and write, whatever the caller asked: the kernel checks the caller's access
        # mode itself, and a file made O_RDWR (the stat cache's save, read back through the
        # same descriptor) must be readable through this handle
        return int(self._call(os.open, real, os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode))

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def flush(self, path: str, fh: int) -> None:
        return None

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        os.fsync(fh)

    def release(self, path: str, fh: int) -> None:
        os.close(fh)

    @staticmethod
    def _call(fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except OSError as exc:
            raise fuse.FuseOSError(exc.errno or errno.EIO) from None


if __name__ == "__main__":
    backing, mountpoint = sys.argv[1], sys.argv[2]
    fuse.FUSE(CaseFolding(backing), mountpoint, foreground=True, nothreads=True)
