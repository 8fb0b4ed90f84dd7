// `prefetch-distance` in the pipeline: each fetch is issued at least that
// many ops before its use (unless the target forbids it), however soon just
// in time would be. On the fast round link (test/inputs/round-fast.toml) the
// 1 KiB fetch of %w takes 0.1 us, a twentieth of an op: just in time is one
// op ahead (the default distance, 1); with 3, three ops ahead (before this
// option reached the placement, the two were the same program).
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-fast.toml"}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-fast.toml" prefetch-distance=3}' | filecheck %s --check-prefix=THREE

// CHECK-LABEL: func.func @f
// CHECK:         %a4 = arith.mulf %a3, %a3
// CHECK-NEXT:    %w_1 = hyperoffload.prefetch %w
// CHECK-NEXT:    %a5 = arith.mulf %a4, %a4
// CHECK-NEXT:    %r = arith.mulf %a5, %w_1

// THREE-LABEL: func.func @f
// THREE:         %a2 = arith.mulf %a1, %a1
// THREE-NEXT:    %w_1 = hyperoffload.prefetch %w
// THREE-NEXT:    %a3 = arith.mulf %a2, %a2
// THREE-NEXT:    %a4 = arith.mulf %a3, %a3
// THREE-NEXT:    %a5 = arith.mulf %a4, %a4
// THREE-NEXT:    %r = arith.mulf %a5, %w_1

func.func @f(%x: tensor<256xf32>, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a1 = arith.mulf %x, %x : tensor<256xf32>
  %a2 = arith.mulf %a1, %a1 : tensor<256xf32>
  %a3 = arith.mulf %a2, %a2 : tensor<256xf32>
  %a4 = arith.mulf %a3, %a3 : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %r = arith.mulf %a5, %w : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
