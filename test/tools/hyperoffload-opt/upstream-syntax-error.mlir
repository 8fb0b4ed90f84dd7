// Text neither xDSL nor upstream MLIR reads: upstream's diagnostic, located.
// RUN: not hyperoffload-opt %s 2>&1 | filecheck %s

// CHECK: upstream-syntax-error.mlir:10:32: error: custom op 'linalg.batch_matmul' number of operands and types do not match
// CHECK-NOT: Traceback

func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
                           outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>) outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
