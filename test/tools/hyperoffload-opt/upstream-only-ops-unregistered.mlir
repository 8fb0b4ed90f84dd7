// An op no one registers (mlir-opt without its test dialect does not know
// `test.*`) is an error, located, as in mlir-opt; an op upstream registers
// beside it does not change that.
// RUN: not hyperoffload-opt %s 2>&1 | filecheck %s
// RUN: not mlir-opt %s 2>&1 | filecheck %s --check-prefix=UPSTREAM

// CHECK: upstream-only-ops-unregistered.mlir:12:8: error: Operation test.source is not registered (upstream MLIR does not know it either)
// CHECK-NOT: Traceback
// UPSTREAM: upstream-only-ops-unregistered.mlir:12:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
func.func @f(%t: tensor<*xf32>) -> index {
  %r = tensor.rank %t : tensor<*xf32>
  %0 = "test.source"() : () -> index
  %s = arith.addi %r, %0 : index
  return %s : index
}
