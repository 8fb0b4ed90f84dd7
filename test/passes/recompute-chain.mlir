// Recomputation through a chain of kernels (test/inputs/round.toml as in
// recompute.mlir): %h2 is made from %h, which is gone after %h2 is made.
// Computing %h2 again for %r needs %h again first: two kernels deep.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto max-recompute-depth=2}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto max-recompute-depth=2}' | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --policy plan --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-check %s --pipeline 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto}' -q 2>/dev/null | filecheck %s --check-prefix=EXEC
// One kernel deep, %h2 cannot be made again from what is resident there.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=4096 recompute=auto max-recompute-depth=1}' 2>&1 | filecheck %s --check-prefix=SHALLOW
// RUN: not hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" max-recompute-depth=0}' 2>&1 | filecheck %s --check-prefix=BAD

// @chain peaks at 5 KiB while %c..%e run with %h2 live (x, h2 and three of
// the chain). The gap of %h2 (ops %a1..%e, 11.26 us) is shorter than its
// 20.48 us round trip; %h and %h2 again take 2.048 + 3.072 us, and the
// clone of %h is freed once the clone of %h2 is made: 4 KiB.
// CHECK-LABEL: func.func @chain
// CHECK:         %e = arith.addf %d, %c
// CHECK-NEXT:    %h_1 = arith.mulf %x, %x
// CHECK-NEXT:    %h2_1 = arith.addf %h_1, %x
// CHECK-NEXT:    %r = arith.addf %e, %h2_1
// CHECK-NOT:     hyperoffload.
// CHECK:         func.return %r

// SIM: "peak_hbm_bytes": 4096,
// EXEC: outputs match: yes (max |diff| = 0)

// SHALLOW: warning: @chain: the best plan found peaks at 5.12 KB, above the target of 4.10 KB
// SHALLOW-NOT: %h2_1 = arith.addf

// BAD: max-recompute-depth must be 1 or more, not 0

func.func @chain(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %h2 = arith.addf %h, %x : tensor<256xf32>
  %a1 = arith.addf %h2, %h2 : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %b, %a1 : tensor<256xf32>
  %d = arith.mulf %c, %b : tensor<256xf32>
  %e = arith.addf %d, %c : tensor<256xf32>
  %r = arith.addf %e, %h2 : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
