"""``python -m turnback.server``: the language server on stdio."""

from __future__ import annotations

import sys

from .app import main

sys.exit(main())
