// `alpha` and `beta` weigh exposed transfer time and peak memory
// (`C = alpha * T_exposed + beta * M_peak`, each relative to the input's:
// exposed time over compute time, peak over peak). Hardware with round
// figures (test/inputs/round.toml): a fetch of one tensor<256xf32> (1 KiB)
// takes 10.24 us; op start times a0 0, a1 2.048, b 4.096, c 6.144,
// a4 9.216, a5 11.264, r 13.312 us; 18.432 us of compute in all.
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml"}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" beta=10}' | filecheck %s --check-prefix=BETA10
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" alpha=0}' | filecheck %s --check-prefix=ALPHA0
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" hbm-capacity=4096}' | filecheck %s --check-prefix=TARGET
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" hbm-capacity=4096 beta=0}' | filecheck %s --check-prefix=BETA0

// @late: the fetch right before its user exposes all 10.24 us (0.56 of the
// compute) at a peak of 4 KiB. Just in time (before a1) it hides, and c
// holds x a1 b c and the copy: 5 KiB, 1.25 times the input's. By default
// (1 x 0 + 1 x 1.25 < 1 x 0.56 + 1 x 1) it moves; with beta=10
// (12.5 > 10.56) it stays.
// CHECK-LABEL:  func.func @late
// CHECK-NEXT:     %a0 = arith.addf %x, %x
// CHECK-NEXT:     %wd = hyperoffload.prefetch %w
// CHECK-NEXT:     %a1 = arith.mulf %a0, %a0
// BETA10-LABEL: func.func @late
// BETA10:         %a5 = arith.mulf %a4, %a4
// BETA10-NEXT:    %wd = hyperoffload.prefetch %w
// BETA10-NEXT:    %r = arith.mulf %a5, %wd
func.func @late(%x: tensor<256xf32>, %w: !hyperoffload.remote<tensor<256xf32>>) -> tensor<256xf32> {
  %a0 = arith.addf %x, %x : tensor<256xf32>
  %a1 = arith.mulf %a0, %a0 : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %a1, %b : tensor<256xf32>
  %a4 = arith.mulf %c, %c : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %r = arith.mulf %a5, %wd : tensor<256xf32>
  %s = arith.addf %r, %r : tensor<256xf32>
  hyperoffload.detach %wd : tensor<256xf32>
  func.return %s : tensor<256xf32>
}

// @mid: the fetch issued before c exposes 3.072 us, and the copy is in HBM
// with x a1 b c: 5 KiB. With alpha=0 (exposure carries no weight) it goes
// right before its user, for the least memory (4 KiB). At a 4096 B target
// it is issued after c, the last op where the copy would pass the target;
// with beta=0 (memory carries no weight) just in time whatever the target:
// before a1, nothing exposed.
// ALPHA0-LABEL: func.func @mid
// ALPHA0:         %a5 = arith.mulf %a4, %a4
// ALPHA0-NEXT:    %wd = hyperoffload.prefetch %w
// ALPHA0-NEXT:    %r = arith.mulf %a5, %wd
// TARGET-LABEL: func.func @mid
// TARGET:         %c = arith.addf %a1, %b
// TARGET-NEXT:    %wd = hyperoffload.prefetch %w
// TARGET-NEXT:    %a4 = arith.mulf %c, %c
// BETA0-LABEL:  func.func @mid
// BETA0-NEXT:     %a0 = arith.addf %x, %x
// BETA0-NEXT:     %wd = hyperoffload.prefetch %w
// BETA0-NEXT:     %a1 = arith.mulf %a0, %a0
func.func @mid(%x: tensor<256xf32>, %w: !hyperoffload.remote<tensor<256xf32>>) -> tensor<256xf32> {
  %a0 = arith.addf %x, %x : tensor<256xf32>
  %a1 = arith.mulf %a0, %a0 : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %c = arith.addf %a1, %b : tensor<256xf32>
  %a4 = arith.mulf %c, %c : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %r = arith.mulf %a5, %wd : tensor<256xf32>
  %s = arith.addf %r, %r : tensor<256xf32>
  hyperoffload.detach %wd : tensor<256xf32>
  func.return %s : tensor<256xf32>
}
