"""The facade every client calls (``Store``), its settings, and store-wide maintenance
(``gc``, ``fsck``). Import ``Store`` from ``turnback`` or ``turnback.store.facade``."""
