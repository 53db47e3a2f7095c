"""From the workspace on disk to a tree of objects and back to a list of changes: the
scanner, its stat cache and forked pre-check, ignore rules (git's), diffs of trees, and
the index of checkpoints."""
