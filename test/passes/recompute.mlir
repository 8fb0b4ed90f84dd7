// Recomputation beside offload on round figures (test/inputs/round.toml: an
// op on 1 KiB takes 2.048 us per KiB it moves; a 1 KiB transfer 10.24 us
// each way, so a store and a fetch take 20.48 us).
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=selective}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=none}' 2>&1 | filecheck %s --check-prefix=NONE
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto}' | hyperoffload-sim /dev/stdin --function f --hardware %inputs/round.toml --policy plan --json | filecheck %s --check-prefix=SIM

// @f peaks at 5 KiB while %c..%e run with %h still live. %h's gap (after %a1,
// before %r) is 11.26 us of compute: a store and a fetch (20.48 us) would
// expose 9.2 us, and the fetch would still land while %e runs, at 5 KiB.
// Computing %h again from %x (resident: an argument) costs 2.048 us and
// frees %h over the whole gap: the peak falls to 4 KiB.
// CHECK-LABEL: func.func @f
// CHECK:         %h = arith.mulf %x, %x
// CHECK:         %e = arith.addf %d, %c
// CHECK-NEXT:    %h_1 = arith.mulf %x, %x
// CHECK-NEXT:    %r = arith.addf %e, %h_1
// CHECK-NOT:     hyperoffload.
// CHECK:         func.return %r

func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %a1 = arith.addf %h, %h : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %b, %a1 : tensor<256xf32>
  %d = arith.mulf %c, %b : tensor<256xf32>
  %e = arith.addf %d, %c : tensor<256xf32>
  %r = arith.addf %e, %h : tensor<256xf32>
  func.return %r : tensor<256xf32>
}

// @offload has a long gap for %h (31.74 us of compute, longer than its 20.48 us
// round trip) and its peak in the middle of it, after the store completes
// and before the fetch starts: the offload hides and meets the target, so
// nothing is recomputed.
// CHECK-LABEL: func.func @offload
// CHECK:         %h_remote = hyperoffload.store %h
// CHECK:         hyperoffload.detach %h
// CHECK:         %h_1 = hyperoffload.prefetch %h_remote
// CHECK:         %r = arith.addf %g6, %h_1
// CHECK-NOT:     arith.mulf %x, %x

// Without recomputation @f has no plan that meets 4 KiB.
// NONE: warning: @f: the best plan found peaks at 5.12 KB, above the target of 4.10 KB
// NONE-LABEL: func.func @f
// NONE-NOT:   %h_1 = arith.mulf
// NONE:       func.return

// SIM: "peak_hbm_bytes": 4096,

func.func @offload(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %a1 = arith.addf %h, %h : tensor<256xf32>
  %f1 = arith.mulf %a1, %a1 : tensor<256xf32>
  %f2 = arith.mulf %f1, %f1 : tensor<256xf32>
  %f3 = arith.mulf %f2, %f2 : tensor<256xf32>
  %f4 = arith.mulf %f3, %f3 : tensor<256xf32>
  %b = arith.mulf %f4, %f4 : tensor<256xf32>
  %c = arith.addf %b, %f4 : tensor<256xf32>
  %d = arith.mulf %c, %b : tensor<256xf32>
  %e = arith.addf %d, %c : tensor<256xf32>
  %g1 = arith.mulf %e, %e : tensor<256xf32>
  %g2 = arith.mulf %g1, %g1 : tensor<256xf32>
  %g3 = arith.mulf %g2, %g2 : tensor<256xf32>
  %g4 = arith.mulf %g3, %g3 : tensor<256xf32>
  %g5 = arith.mulf %g4, %g4 : tensor<256xf32>
  %g6 = arith.mulf %g5, %g5 : tensor<256xf32>
  %r = arith.addf %g6, %h : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
