"""``python -m turnback.server``: the language server on stdio."""

from __future__ import annotations

import sys

from .startwalk import begin

begin()  # before any thread: the start-up walk's second core (startwalk.py)

from .codecache import install  # noqa: E402

install()  # before pygls and lsprotocol are imported

from .app import main  # noqa: E402

sys.exit(main())
