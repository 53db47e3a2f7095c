"""``python -m turnback.server``: the language server on stdio."""

from __future__ import annotations

import sys

from .codecache import install

install()  # before pygls and lsprotocol are imported

from .app import main  # noqa: E402

sys.exit(main())
