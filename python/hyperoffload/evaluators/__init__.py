"""Running programs for real values: the numpy evaluator and the MLIR ExecutionEngine runner."""
