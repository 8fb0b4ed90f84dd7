"""
The engine: the discrete-event simulator of a schedule on the hardware
model (`hyperoffload.model`), the arena of a run, its reports, traces and
plots.
"""
