// solver=milp, the exact reference (test/python/planning/test_milp.py derives
// this optimum by hand). On the round-figure device with a fast link
// (test/inputs/round-fast.toml: ops of 2.048 and 3.072 us, 14.336 us in all; a
// 1 KiB transfer takes 0.1024 us), the peak is 5 KiB at %e, while %a waits
// over ops 2-4 for its second use. Moving %a out lowers the peak to 4 KiB
// only if its fetch comes after %e, right before %r, which then waits
// 0.1024 us for it (+0.71%): within 1% the MILP takes it (the heuristic,
// whose fetches hide, does not), within 0.5% nothing can leave HBM.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{solver=milp hardware="%inputs/round-fast.toml" max-slowdown=0.01}' 2>/dev/null | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{solver=milp hardware="%inputs/round-fast.toml" max-slowdown=0.005}' 2>/dev/null | filecheck %s --check-prefix=NONE
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round-fast.toml" max-slowdown=0.01}' 2>/dev/null | filecheck %s --check-prefix=NONE
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{solver=milp hardware="%inputs/round-fast.toml" max-slowdown=0.01}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: not hyperoffload-opt %s -p 'hyperoffload-insert{solver=milp milp-max-steps=5}' 2>&1 | filecheck %s --check-prefix=LARGE

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %a = arith.mulf %x, %x
// CHECK-NEXT:    %a_remote = hyperoffload.store %a
// CHECK-NEXT:    %b = arith.mulf %a, %a
// CHECK-NEXT:    hyperoffload.detach %a
// CHECK-NEXT:    %c = arith.mulf %b, %b
// CHECK-NEXT:    %d = arith.mulf %c, %c
// CHECK-NEXT:    %e = arith.addf %c, %d
// CHECK-NEXT:    %a_1 = hyperoffload.prefetch %a_remote
// CHECK-NEXT:    %r = arith.addf %e, %a_1
// CHECK-NEXT:    hyperoffload.detach %a_1
// CHECK-NEXT:    func.return %r

// NONE-LABEL: func.func @f
// NONE-NOT:     hyperoffload.

// REMARK:     hyperoffload-milp: remark: @f: target {{.*}}: model peak 4.10 KB, model bound 4.10 KB, gap 0.00% (optimal, {{.*}}); simulated peak 4.10 KB
// REMARK:     hyperoffload-pipeline: remark: smallest target within 1.0% slowdown: 4.10 KB (unconstrained peak 5.12 KB)

// LARGE: error: solver=milp: @f has 6 compute steps, more than the 5 the exact reference takes (milp-max-steps); use solver=heuristic
func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = arith.mulf %x, %x : tensor<256xf32>
  %b = arith.mulf %a, %a : tensor<256xf32>
  %c = arith.mulf %b, %b : tensor<256xf32>
  %d = arith.mulf %c, %c : tensor<256xf32>
  %e = arith.addf %c, %d : tensor<256xf32>
  %r = arith.addf %e, %a : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
