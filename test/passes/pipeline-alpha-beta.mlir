// `alpha` and `beta` in the pipeline, with and without a capacity: they
// weigh exposed transfer time and peak memory (`C = alpha * T_exposed +
// beta * M_peak`, each relative to the input's) when the fetch of the
// tagged argument %w is placed. Hardware with round figures
// (test/inputs/round.toml): the fetch of %w (1 KiB) takes 10.24 us; op
// start times a0 0, a1 2.048, b 4.096, c 6.144, a4 9.216, a5 11.264,
// r 13.312 us; 18.432 us of compute in all. Issued before a1 it hides
// (done at 12.288 us) and c holds x a1 b c and the copy: 5 KiB; issued
// after c it exposes 6.144 us at 4 KiB; before a5 (the least distance, 1)
// 8.192 us at 4 KiB.
//
// At the device's 1 MB: by default it hides (1 x 0 + 1 x 1.25 beats
// 1 x 0.44 + 1 x 1); beta=10 weighs memory and keeps the copy out as long
// as the distance lets it (12.5 > 10.44); alpha=0 likewise (exposure is
// free).
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml"}' 2>&1 | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" beta=10}' 2>&1 | filecheck %s --check-prefix=BETA10
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" alpha=0}' 2>&1 | filecheck %s --check-prefix=ALPHA0
//
// At a 4096 B capacity the plan must keep 5 KiB from building: by default
// the fetch is issued after c, the earliest op at the target; alpha=0 issues
// it as late as the distance allows; beta=0 (the least exposure, even above
// the target) issues it before a1, hides it, and warns that the peak is
// above the target.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 alpha=0}' 2>&1 | filecheck %s --check-prefix=TARGET-ALPHA0
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 beta=0}' 2>&1 | filecheck %s --check-prefix=TARGET-BETA0

// CHECK:        as written: peak 5.12 KB, slowdown +0.00% (18.4 us, 0.0 us of transfers exposed
// CHECK-LABEL:  func.func @late
// CHECK-NEXT:     %a0 = arith.addf %x, %x
// CHECK-NEXT:     %w_1 = hyperoffload.prefetch %w
// CHECK-NEXT:     %a1 = arith.mulf %a0, %a0

// BETA10:       as written: peak 4.10 KB, slowdown +44.44% (26.6 us, 8.2 us of transfers exposed
// BETA10-LABEL: func.func @late
// BETA10:         %a4 = arith.mulf %c, %c
// BETA10-NEXT:    %w_1 = hyperoffload.prefetch %w
// BETA10-NEXT:    %a5 = arith.mulf %a4, %a4

// ALPHA0:       as written: peak 4.10 KB, slowdown +44.44% (26.6 us, 8.2 us of transfers exposed
// ALPHA0-LABEL: func.func @late
// ALPHA0:         %a4 = arith.mulf %c, %c
// ALPHA0-NEXT:    %w_1 = hyperoffload.prefetch %w
// ALPHA0-NEXT:    %a5 = arith.mulf %a4, %a4

// TARGET:       as written: peak 4.10 KB, slowdown +33.33% (24.6 us, 6.1 us of transfers exposed
// TARGET-LABEL: func.func @late
// TARGET:         %c = arith.addf %a1, %b
// TARGET-NEXT:    %w_1 = hyperoffload.prefetch %w
// TARGET-NEXT:    %a4 = arith.mulf %c, %c

// TARGET-ALPHA0:       as written: peak 4.10 KB, slowdown +44.44% (26.6 us, 8.2 us of transfers exposed
// TARGET-ALPHA0-LABEL: func.func @late
// TARGET-ALPHA0:         %a4 = arith.mulf %c, %c
// TARGET-ALPHA0-NEXT:    %w_1 = hyperoffload.prefetch %w
// TARGET-ALPHA0-NEXT:    %a5 = arith.mulf %a4, %a4

// TARGET-BETA0:       warning: @late: the best plan found peaks at 5.12 KB, above the target of 4.10 KB
// TARGET-BETA0:       as written: peak 5.12 KB, slowdown +0.00% (18.4 us, 0.0 us of transfers exposed
// TARGET-BETA0-LABEL: func.func @late
// TARGET-BETA0-NEXT:    %a0 = arith.addf %x, %x
// TARGET-BETA0-NEXT:    %w_1 = hyperoffload.prefetch %w
// TARGET-BETA0-NEXT:    %a1 = arith.mulf %a0, %a0

func.func @late(%x: tensor<256xf32>, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a0 = arith.addf %x, %x : tensor<256xf32>
  %a1 = arith.mulf %a0, %a0 : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %a1, %b : tensor<256xf32>
  %a4 = arith.mulf %c, %c : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %r = arith.mulf %a5, %w : tensor<256xf32>
  %s = arith.addf %r, %r : tensor<256xf32>
  func.return %s : tensor<256xf32>
}
