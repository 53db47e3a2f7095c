"""The one compiled part of Turnback, optional: ``snapshot/_folderparts.c``.

Everything else is in pyproject.toml. ``optional=True``: where it cannot be built (no
compiler, no Python headers, not Linux) the install goes on and ``snapshot/prescan.py``
uses its Python path, which hashes the same bytes (docs/ARCHITECTURE.md).
"""

import sys

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("turnback.snapshot._folderparts", ["server/turnback/snapshot/_folderparts.c"],
              optional=True)
] if sys.platform.startswith("linux") else [])
