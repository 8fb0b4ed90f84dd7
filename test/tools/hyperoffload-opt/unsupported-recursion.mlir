// Recursion through func.call is beyond what the cost model supports (a call
// is costed by its callee's call tree, which must be finite): a located
// diagnostic at the call, naming the cycle, from the planner, the simulator,
// the lowering and the checker alike (which would otherwise run it natively,
// without end, and crash).
// RUN: not hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=1MB}' 2>&1 | filecheck %s
// RUN: not hyperoffload-sim %s 2>&1 | filecheck %s
// RUN: not hyperoffload-opt %s -p convert-hyperoffload-to-linalg 2>&1 | filecheck %s
// RUN: not hyperoffload-check %s -q 2>&1 | filecheck %s

// CHECK: unsupported-recursion.mlir:[[# @LINE + 3]]:3: error: 'func.call' recurses (@f -> @g -> @f): recursion through func.call is not supported (the cost model needs a finite call tree)
// CHECK-NOT: Traceback
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
