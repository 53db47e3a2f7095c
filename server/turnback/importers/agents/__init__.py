"""One parser per coding agent whose own sessions Turnback imports (``registry.py`` lists them
with ``agent=True``): where the agent writes, and its records read into neutral events."""
