"""Set-up of every test: the user's own git configuration stays out of it.

Checkpoints honour ``core.excludesFile`` (gitexclude.py): a developer's global ignore
rules must not change what the tests' workspaces record. Tests of those rules point
``HOME``/``XDG_CONFIG_HOME``/``GIT_CONFIG_GLOBAL`` at their own files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_user_git_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME")}
    os.environ["GIT_CONFIG_GLOBAL"] = os.devnull
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
