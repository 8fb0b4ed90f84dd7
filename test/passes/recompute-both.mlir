// Both at once (test/inputs/round.toml as in recompute.mlir): @both peaks at
// 7 KiB while %m..%n run with %h and %k live; 5 KiB needs both out there.
// %h's gap is long (the offload hides: stored after %h, fetched back during
// the %g chain); %k's gap (after %k2, before %kk: 17.41 us) is shorter than
// its 20.48 us round trip, and computing %k again from %x takes 2.048 us:
// %k is recomputed, %h offloaded.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=5120 recompute=auto}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=5120 recompute=auto}' | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --policy plan --json | filecheck %s --check-prefix=SIM
// The planned program, lowered and run by the ExecutionEngine, computes the
// same bits as the input.
// RUN: hyperoffload-check %s --pipeline 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=5120 recompute=auto}' -q 2>/dev/null | filecheck %s --check-prefix=EXEC
// EXEC: outputs match: yes (max |diff| = 0)
// Offload alone stores and fetches %k too, exposing its transfer.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=5120 recompute=none}' | filecheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @both
// CHECK:         %h_remote = hyperoffload.store %h
// CHECK:         hyperoffload.detach %h
// CHECK-NOT:     hyperoffload.store %k
// CHECK:         %n = arith.addf %e, %m
// CHECK-NEXT:    %k_1 = arith.addf %x, %x
// CHECK-NEXT:    %kk = arith.addf %n, %k_1
// CHECK:         %h_1 = hyperoffload.prefetch %h_remote
// CHECK:         %r = arith.addf %g6, %h_1

// SIM: "peak_hbm_bytes": 5120,

// NONE-LABEL: func.func @both
// NONE:         hyperoffload.store %h
// NONE:         hyperoffload.store %k
// NONE-NOT:     %k_1 = arith.addf %x, %x

func.func @both(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %a = arith.addf %h, %h : tensor<256xf32>
  %f1 = arith.mulf %a, %a : tensor<256xf32>
  %f2 = arith.mulf %f1, %f1 : tensor<256xf32>
  %f3 = arith.mulf %f2, %f2 : tensor<256xf32>
  %f4 = arith.mulf %f3, %f3 : tensor<256xf32>
  %k = arith.addf %x, %x : tensor<256xf32>
  %k2 = arith.addf %k, %f4 : tensor<256xf32>
  %m = arith.mulf %k2, %k2 : tensor<256xf32>
  %b = arith.addf %m, %k2 : tensor<256xf32>
  %c = arith.addf %b, %m : tensor<256xf32>
  %d = arith.mulf %c, %b : tensor<256xf32>
  %e = arith.addf %d, %c : tensor<256xf32>
  %n = arith.addf %e, %m : tensor<256xf32>
  %kk = arith.addf %n, %k : tensor<256xf32>
  %g1 = arith.mulf %kk, %kk : tensor<256xf32>
  %g2 = arith.mulf %g1, %g1 : tensor<256xf32>
  %g3 = arith.mulf %g2, %g2 : tensor<256xf32>
  %g4 = arith.mulf %g3, %g3 : tensor<256xf32>
  %g5 = arith.mulf %g4, %g4 : tensor<256xf32>
  %g6 = arith.mulf %g5, %g5 : tensor<256xf32>
  %r = arith.addf %g6, %h : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
