"""``os.open`` flags that Windows' ``os`` lacks, as 0 there, so modules that name them
import on every platform.

The code that relies on them (opening folders relative to a descriptor, refusing
symlinks with ``O_NOFOLLOW``) also needs ``dir_fd``, which Windows lacks too: it runs
where ``os.supports_dir_fd`` has ``os.open`` (``HAS_DIR_FD``); elsewhere the caller says
so by name instead of failing with an ``AttributeError`` at import.
"""

from __future__ import annotations

import os

O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
# Windows' equivalent of close-on-exec is "not inherited"
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0)
HAS_DIR_FD: bool = os.open in os.supports_dir_fd
