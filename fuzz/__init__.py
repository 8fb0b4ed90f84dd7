"""
The project's fuzzers (`make fuzz`; not part of CI, which runs a seeded
sample from `test/python/fuzz`):

- `fuzz.run`: mutation fuzzing of the inputs of `hyperoffload-opt` and
  `hyperoffload-sim` (IR text, schedule JSON, hardware TOML), in-process in
  a pool of forked workers, each case with a timeout; every traceback, crash
  or hang is saved as a reproducer (`fuzz.mutate` has the mutators);
- `fuzz.differential`: random DAGs and transformer-like programs
  (`fuzz.programs`) planned by each pass configuration and checked bit for
  bit against the unplanned program and for the residency invariants, the
  lowering through the MLIR ExecutionEngine included.

Run from the repository root: `python -m fuzz.run --cases 10000 --jobs 2`,
`python -m fuzz.differential --cases 1000 --jobs 2`.
"""
