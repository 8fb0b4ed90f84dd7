// Named linalg ops xDSL lacks reach us generalised by upstream MLIR; a
// diagnostic about one names the op the input wrote, not the linalg.generic
// it became.
// RUN: not hyperoffload-opt %s 2>&1 | filecheck %s
// RUN: sed -e 's/"hyperoffload.detach".*//' %s > %t.mlir
// RUN: not hyperoffload-opt %t.mlir -p 'hyperoffload-pipeline{hbm-capacity=100}' 2>&1 | filecheck %s --check-prefix=PLAN

// CHECK: generalised-op-diagnostics.mlir:[[# @LINE + 4]]:3: error: detach of live data that no store has persisted: %{{[a-z0-9]+}} is still used by 'linalg.batch_matmul' (generalised to 'linalg.generic') after it
// PLAN: .mlir:[[# @LINE + 4]]:8: error: no plan meets the HBM target of 100 B: 'linalg.batch_matmul' alone needs 496 B (its inputs and outputs)
// CHECK-NOT: Traceback
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  "hyperoffload.detach"(%a) : (tensor<2x3x4xf32>) -> ()
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
