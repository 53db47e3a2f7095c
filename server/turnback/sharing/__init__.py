"""History that travels: push and pull sessions and checkpoints through a git remote, over
the store's API (``docs/SHARING.md``; the layout in ``docs/FORMAT.md``)."""
