// `hyperoffload.prefetch_distance = N` on an argument (a model's
// `prefetch(param, distance=N)`, hyperoffload.frontend.annotations): that
// argument's fetch is issued at least N ops before its use, however soon
// just in time would be, while the others keep the pipeline's distance. On
// the fast round link (test/inputs/round-fast.toml) just in time is one op
// ahead: %v (no annotation) is fetched before %a5, the op before its use;
// %w (distance 3) before %a3, four ops before its use.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-fast.toml"}' | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK:         %a2 = arith.mulf %a1, %a1
// CHECK-NEXT:    %w_1 = hyperoffload.prefetch %w
// CHECK-NEXT:    %a3 = arith.mulf %a2, %a2
// CHECK-NEXT:    %a4 = arith.mulf %a3, %a3
// CHECK-NEXT:    %v_1 = hyperoffload.prefetch %v
// CHECK-NEXT:    %a5 = arith.mulf %a4, %a4
// CHECK-NEXT:    %b = arith.mulf %a5, %v_1
// CHECK-NEXT:    hyperoffload.detach %v_1
// CHECK-NEXT:    %r = arith.mulf %b, %w_1

func.func @f(%x: tensor<256xf32>,
             %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.prefetch_distance = 3 : i64},
             %v: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a1 = arith.mulf %x, %x : tensor<256xf32>
  %a2 = arith.mulf %a1, %a1 : tensor<256xf32>
  %a3 = arith.mulf %a2, %a2 : tensor<256xf32>
  %a4 = arith.mulf %a3, %a3 : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %b = arith.mulf %a5, %v : tensor<256xf32>
  %r = arith.mulf %b, %w : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
