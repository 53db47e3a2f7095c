"""Wires the Turnback language server together and runs it on stdio.

The server's class lives in ``core.py`` and its methods in ``features/``; this
module is the only one that sees both: ``create_server`` registers every
feature on a fresh :class:`~turnback.server.core.TurnbackServer`, ``main``
serves it. Nothing in the package imports this module (``__main__`` and the
CLI's ``turnback serve`` do), so the features never import what wires them.
"""

from __future__ import annotations

import faulthandler
import gc
import logging
import signal
import sys
import threading

from . import codecache, logs
from .core import VERSION, TurnbackServer

log = logging.getLogger("turnback.server")

CODE_CACHE_SAVE_S = 5.0  # after start, when the first requests have been answered


def create_server() -> TurnbackServer:
    from .features import register_all

    ls = TurnbackServer()
    register_all(ls)
    return ls


def main() -> int:
    """Serve on stdio until the client says exit or closes the pipe."""
    logs.setup_stderr()
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>`: every thread's stack on stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # The protocol owns stdout: anything else that prints goes to stderr.
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr
    ls = create_server()
    # The modules and classes just loaded live as long as the process: out of the
    # collector's sight, a full collection walks a fraction of the objects.
    gc.freeze()
    log.info("turnback language server %s on stdio", VERSION)
    # What was compiled for the first requests is kept for the next start (codecache.py).
    saver = threading.Timer(CODE_CACHE_SAVE_S, codecache.save)
    saver.daemon = True
    saver.start()
    try:
        ls.start_io(sys.stdin.buffer, stdout)
    except KeyboardInterrupt:
        pass
    finally:
        saver.cancel()
        codecache.save()
    return ls.exit_code
