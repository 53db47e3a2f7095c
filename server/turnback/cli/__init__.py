"""The ``turnback`` command line: a thin layer over ``turnback.Store``."""
