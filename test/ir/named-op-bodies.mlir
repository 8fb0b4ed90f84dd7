// Named linalg ops as torch-mlir prints them keep upstream's bodies
// (hyperoffload.ir.xdsl_fixes): a bf16 linear layer, a bf16 matmul into an
// f32 accumulator with no op xDSL lacks beside it, parses (its body extends
// the inputs before the multiply-add; it was rejected with a message cut
// short, "'arith.addf' ... does not verify:"), and max-pooling takes the
// maximum of the output and the input (it read the window's unused element).
// RUN: hyperoffload-opt %s --split-input-file --print-op-generic | filecheck %s

// CHECK-LABEL: "linalg.matmul"
// CHECK:         %[[A:.*]] = "arith.extf"(%{{.*}}) : (bf16) -> f32
// CHECK-NEXT:    %[[B:.*]] = "arith.extf"(%{{.*}}) : (bf16) -> f32
// CHECK-NEXT:    %[[P:.*]] = "arith.mulf"(%[[A]], %[[B]])
// CHECK-NEXT:    %[[S:.*]] = "arith.addf"(%[[P]], %{{.*}})
// CHECK-NEXT:    "linalg.yield"(%[[S]])
func.func @linear(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>) -> tensor<4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = linalg.matmul ins(%x, %w : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: "linalg.pooling_nchw_max"
// CHECK-NEXT:    ^{{.*}}(%[[IN:.*]]: f32, %[[WINDOW:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:    %[[M:.*]] = "arith.maximumf"(%[[OUT]], %[[IN]])
// CHECK-NEXT:    "linalg.yield"(%[[M]])
func.func @pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x1x2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %2 = tensor.empty() : tensor<2x2xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %2 : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %3 : tensor<1x1x2x2xf32>
}
