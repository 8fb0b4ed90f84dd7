// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-tiers.toml" hbm-capacity=4096 recompute=none}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-tiers.toml" hbm-capacity=4096 recompute=none}' | hyperoffload-sim /dev/stdin --hardware %inputs/round-tiers.toml --hbm-capacity 4096 --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-tiers.toml" hbm-capacity=4096 recompute=none tiers=remote,host}' | filecheck %s --check-prefix=NOSSD
// RUN: not hyperoffload-opt %s -p 'hyperoffload-insert{hardware="%inputs/round.toml" hbm-capacity=4096 tiers=ssd}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: hyperoffload-check %s --pipeline 'hyperoffload-pipeline{hardware="%inputs/round-tiers.toml" hbm-capacity=4096 recompute=none}' -q 2>/dev/null | filecheck %s --check-prefix=EXEC

// Three tiers (inputs/round-tiers.toml): a 1 KiB round trip (store, then
// fetch) takes 0.2048 us to remote (10 GB/s), 4.096 us to host (500 MB/s)
// and 20.48 us to ssd (100 MB/s, staged through host). Each value is 1 KiB;
// %a = x * x moves 2 KiB (2.048 us), every other op 3 KiB (3.072 us):
// 51.2 us in all. Unplanned, the peak is 6 KiB at %e (x a b c d e); the
// target 4 KiB needs both %a and %b out of HBM there.
// - %a is idle from %p to %r: 14 ops, 43.008 us. Every round trip hides;
//   the slowest tier wins: ssd. Its store (10.24 us from 2.048 us; its host
//   leg 2.048 us) ends at 12.288 us, before the peak (%e from 23.552 us); its
//   fetch must start by 48.128 - 10.24 = 37.888 us: before %h2 (35.84 us).
// - %b is idle from %c to %g: 3 ops, 9.216 us. The host round trip (4.096 us)
//   hides there, the ssd one (20.48 us) does not: host. Its fetch (2.048 us)
//   must start by 29.696 - 2.048 = 27.648 us: before %f (26.624 us).
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %a = arith.mulf %x, %x
// CHECK-NEXT:    %a_remote = hyperoffload.store %a : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>, ssd>
// CHECK:         %b = arith.mulf %t, %x
// CHECK-NEXT:    %b_remote = hyperoffload.store %b : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>, host>
// CHECK:         %b_1 = hyperoffload.prefetch %b_remote : !hyperoffload.remote<tensor<256xf32>, host> -> tensor<256xf32>
// CHECK-NEXT:    %f = arith.mulf %e, %x
// CHECK:         %a_1 = hyperoffload.prefetch %a_remote : !hyperoffload.remote<tensor<256xf32>, ssd> -> tensor<256xf32>
// CHECK-NEXT:    %h2 = arith.mulf %h1, %x
// CHECK:         %r = arith.addf %h5, %a_1

// Simulated: the peak meets the target and no transfer is exposed.
// SIM: "peak_hbm_bytes": 4096,
// SIM: "makespan_s": 5.12{{[0-9]*}}e-05,
// SIM: "exposed_transfer_s": 0.0,
// SIM: "oom": false,

// Without ssd (`tiers=remote,host`), %a goes to the slowest tier left.
// NOSSD: %a_remote = hyperoffload.store %a : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>, host>
// NOSSD: %b_remote = hyperoffload.store %b : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>, host>

// MISSING: error: hardware 'round' offers none of the tiers ssd (it has: remote)

// Lowered (ssd is memory space 3) and run, it computes what the program does.
// EXEC: outputs match: yes (max |diff| = 0)
func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = arith.mulf %x, %x : tensor<256xf32>
  %p = arith.addf %a, %x : tensor<256xf32>
  %q = arith.mulf %p, %x : tensor<256xf32>
  %s = arith.mulf %q, %x : tensor<256xf32>
  %t = arith.mulf %s, %x : tensor<256xf32>
  %b = arith.mulf %t, %x : tensor<256xf32>
  %c = arith.mulf %b, %x : tensor<256xf32>
  %d = arith.addf %c, %x : tensor<256xf32>
  %e = arith.addf %c, %d : tensor<256xf32>
  %f = arith.mulf %e, %x : tensor<256xf32>
  %g = arith.addf %f, %b : tensor<256xf32>
  %h1 = arith.mulf %g, %x : tensor<256xf32>
  %h2 = arith.mulf %h1, %x : tensor<256xf32>
  %h3 = arith.mulf %h2, %x : tensor<256xf32>
  %h4 = arith.mulf %h3, %x : tensor<256xf32>
  %h5 = arith.mulf %h4, %x : tensor<256xf32>
  %r = arith.addf %h5, %a : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
