"""Making the workspace equal to a checkpoint, undoably: the plan, applying it without
ever writing outside the workspace or over what was not captured, and the journal and
operation log that finish an interrupted rewind and undo any of them."""
