"""JSON-RPC method names: the contract between the server and every client.

The extension keeps the same names in ``extension/src/protocol.ts``; a test
checks that both lists agree.
"""

from __future__ import annotations

STATUS = "turnback/status"
SESSIONS = "turnback/sessions"
SESSION = "turnback/session"
CHECKPOINTS = "turnback/checkpoints"
CREATE_CHECKPOINT = "turnback/createCheckpoint"
CHANGES = "turnback/changes"
FILE_CONTENT = "turnback/fileContent"
REWIND = "turnback/rewind"
UNDO = "turnback/undo"
FORK = "turnback/fork"
IMPORT = "turnback/import"
GC = "turnback/gc"
HOOKS = "turnback/hooks"
TURNS = "turnback/turns"
TURN_STEPS = "turnback/turnSteps"
FILE_HISTORY = "turnback/fileHistory"
IMPORT_CANDIDATES = "turnback/importCandidates"
CONTINUE = "turnback/continue"
PUSH_HISTORY = "turnback/pushHistory"
PULL_HISTORY = "turnback/pullHistory"
BLAME = "turnback/blame"

DID_CHANGE = "turnback/didChange"

# Fields of answers that extension/src/protocol.ts names too (docs/PROTOCOL.md): a
# checkpoint's `safetyOf` says it is a rewind's or an undo's safety checkpoint, and of which
SAFETY_OF = "safetyOf"
SAFETY_REWIND = "rewind"
SAFETY_UNDO = "undo"
# … and what it was taken before, in words (store/safety_names.py writes them, once)
SAFETY_WORDS = "words"

REQUESTS = (
    STATUS,
    SESSIONS,
    SESSION,
    CHECKPOINTS,
    CREATE_CHECKPOINT,
    CHANGES,
    FILE_CONTENT,
    REWIND,
    UNDO,
    FORK,
    IMPORT,
    GC,
    HOOKS,
    TURNS,
    TURN_STEPS,
    FILE_HISTORY,
    IMPORT_CANDIDATES,
    CONTINUE,
    PUSH_HISTORY,
    PULL_HISTORY,
    BLAME,
)
NOTIFICATIONS = (DID_CHANGE,)
