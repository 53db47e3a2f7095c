"""``python -m turnback.server``: the language server on stdio."""

from __future__ import annotations

import gc
import sys

from .watching.startwalk import begin

begin()  # before any thread: the start-up walk's second core (startwalk.py)

# No cyclic collection while the server's modules are imported: they make few cycles and
# many objects (lsprotocol's 550 classes), so the collector's passes over them, gen 2's
# above all, were 37-67 ms of the imports' 208-364 ms, landing in whichever module was
# importing then (``turnback.events``' "48 ms", ``datetime``'s "31 ms"; bench/RESULTS.md,
# issue 23 branch start23). Frozen before the collector is back on: none of its passes
# walks them (``app.main`` freezes again what its set-up made).
gc.disable()

from .codecache import install  # noqa: E402

install()  # before pygls and lsprotocol are imported

from .app import main  # noqa: E402

gc.freeze()
gc.enable()
sys.exit(main())
