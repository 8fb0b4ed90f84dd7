// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{place-arguments=true hbm-capacity=5120}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{place-arguments=true hbm-capacity=5120}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Two optimizer states, each named by the result holding its update
// (`tf.aliasing_output`): %m1 is updated right after its gradient, early in
// the step, %m2 by the step's last op (as the first layer's states are, with
// the optimizer step in the backward pass). At 5120 B one of them must stay
// in the pool, and a state left there has its update written back. Only
// %m1's store has compute after it to hide behind: %m2's would run after the
// last op, exposed. So %m1 stays in the pool, and %m2 is kept in HBM with its
// update. Ranking the states by their fetches alone left %m2 in the pool
// too, and the step ran 12.6% slower (its store after the last op).
// CHECK-LABEL: func.func @step
// CHECK-SAME:    %m1: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 1 : i32}
// CHECK-SAME:    %m2: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<hbm>, tf.aliasing_output = 2 : i32}
// CHECK:         %m1_1 = hyperoffload.prefetch %m1
// CHECK:         %n1 = arith.addf %m1_1, %g1
// CHECK-NEXT:    %n1_remote = hyperoffload.store %n1
// CHECK-NOT:     hyperoffload.store
// CHECK:         %n2 = arith.addf %m2, %g2
// CHECK-NEXT:    func.return %d, %n1_remote, %n2

// REMARK: as written: peak 5.12 KB, slowdown +0.07%

func.func @step(%x: tensor<256xf32>,
                %m1: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 1 : i32},
                %m2: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 2 : i32})
    -> (tensor<256xf32>,
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %g1 = arith.mulf %x, %x : tensor<256xf32>
  %n1 = arith.addf %m1, %g1 : tensor<256xf32>
  %a = arith.mulf %g1, %g1 : tensor<256xf32>
  %b = arith.addf %a, %g1 : tensor<256xf32>
  %c = arith.mulf %b, %b : tensor<256xf32>
  %d = arith.addf %c, %b : tensor<256xf32>
  %g2 = arith.mulf %d, %x : tensor<256xf32>
  %n2 = arith.addf %m2, %g2 : tensor<256xf32>
  return %d, %n1, %n2 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
