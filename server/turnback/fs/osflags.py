"""``os.open`` flags that Windows' ``os`` lacks, as 0 there, so modules that name them
import on every platform; and ``DESCRIPTORS``, whether folders are reached through
descriptors here (``fs/folders.py`` says what that means and what replaces it).

``DESCRIPTORS`` is decided once, by capability, not by ``sys.platform``: ``os.open``
takes ``dir_fd``, ``os.scandir`` takes a descriptor, and ``O_NOFOLLOW`` and
``O_DIRECTORY`` exist (all true on Linux and macOS, none on Windows' CPython). The tests
force the path implementation on Linux with ``TURNBACK_FS_PATHS=1`` (read here, once):
then the flags Windows lacks are 0 as they are there, so what runs is what Windows runs,
as far as Linux' own system calls allow.
"""

from __future__ import annotations

import os

FORCED_PATHS: bool = os.environ.get("TURNBACK_FS_PATHS") == "1"  # tests only
DESCRIPTORS: bool = (
    not FORCED_PATHS
    and os.open in os.supports_dir_fd
    and os.scandir in os.supports_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0) if DESCRIPTORS else 0
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0) if DESCRIPTORS else 0
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
O_BINARY: int = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# POSIX owners and permission bits. Windows has neither (its os has no geteuid, st_uid is 0,
# chmod keeps only a read-only bit, stat reports 0o666 or 0o444 for every file)
POSIX_MODES: bool = hasattr(os, "geteuid")
# Windows' equivalent of close-on-exec is "not inherited"
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0)
