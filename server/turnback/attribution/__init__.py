"""Who wrote each line: attribution from the turns' checkpoints (docs/ATTRIBUTION.md).

Pure logic over the Store's public API: ``origins`` (what a line's origin is),
``linediff`` (carrying origins from one version of a file to the next, moves included),
``history`` (the folder's chain of checkpoints and who made each step of it), ``blame``
(the walk over that chain for one file), ``cache`` (kept walks, continued after a new
checkpoint), ``stats`` (lines added and removed per author) and ``trace`` (Agent Trace
records of a git commit's lines).
"""
