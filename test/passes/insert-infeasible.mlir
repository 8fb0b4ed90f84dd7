// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics -p 'hyperoffload-insert{hbm-capacity=10000}' | filecheck %s
// RUN: not hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=10000}' 2>&1 | filecheck %s

// The multiply needs its two inputs and its output at once: 3 x 4096 B.
// CHECK: insert-infeasible.mlir:8:3: error: no plan meets the HBM target of 10000 B: 'arith.mulf' alone needs 12288 B (its inputs and outputs)
func.func @too_small(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = arith.addf %x, %x : tensor<1024xf32>
  %b = arith.mulf %a, %y : tensor<1024xf32>
  func.return %b : tensor<1024xf32>
}
