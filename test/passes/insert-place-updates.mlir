// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{place-arguments=true}' | filecheck %s --check-prefix=FITS
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{place-arguments=true hbm-capacity=5120}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{place-arguments=true hbm-capacity=5120}' | hyperoffload-sim /dev/stdin --policy plan --hbm-capacity 5120 --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=5120}' | filecheck %s --check-prefix=RULE

// A training step's weight %w and optimizer state %m each name the result
// that holds their update (`tf.aliasing_output`, as a training export's
// parameters and states do). With `place-arguments`, where an argument
// lives between calls is the plan's choice, and its update goes where it
// came from: returned in HBM if the argument is kept there, written back to
// the pool if it stays in its tier, so that the next call finds each where
// this one took it from.
//
// With everything in HBM the step peaks at 6144 B (1 KiB per tensor): all
// of it fits the device, so both arguments and both updates stay in HBM
// (their attributes become `hbm`) and nothing moves.
// FITS-LABEL: func.func @step
// FITS-SAME:    %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>, tf.aliasing_output = 1 : i32}
// FITS-SAME:    %m: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<hbm>, tf.aliasing_output = 2 : i32}
// FITS-SAME:    -> (tensor<256xf32>, tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>}, tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<hbm>})
// FITS-NOT:     hyperoffload.store
// FITS-NOT:     hyperoffload.prefetch
// FITS:         func.return %b, %w2, %m2

// At 5120 B the state stays in the pool: fetched just before its update and
// its update stored right after it, returned as the remote copy (the
// optimizer state is never resident across the forward). The weight is kept
// in HBM, and so is its update.
// CHECK-LABEL: func.func @step
// CHECK-SAME:    %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>, tf.aliasing_output = 1 : i32}
// CHECK-SAME:    %m: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 2 : i32}
// CHECK-SAME:    -> (tensor<256xf32>, tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>}, !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>})
// CHECK:         %m_1 = hyperoffload.prefetch %m
// CHECK-NEXT:    %g = arith.mulf %b, %x
// CHECK:         %m2 = arith.addf %m_1, %g
// CHECK-NEXT:    %m2_remote = hyperoffload.store %m2
// CHECK-NEXT:    hyperoffload.detach %m_1
// CHECK:         %w2 = arith.subf %w, %m2
// CHECK-NEXT:    hyperoffload.detach %m2
// CHECK-NEXT:    func.return %b_1, %w2, %m2_remote

// SIM: "peak_hbm_bytes": 5120

// Without `place-arguments` both stay in the pool and both updates are
// written back, as the tags say.
// RULE-LABEL: func.func @step
// RULE-SAME:    -> (tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}, !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>})

func.func @step(%x: tensor<256xf32>,
                %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 1 : i32},
                %m: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 2 : i32})
    -> (tensor<256xf32>,
        tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %y = arith.mulf %x, %w : tensor<256xf32>
  %a = arith.mulf %y, %y : tensor<256xf32>
  %b = arith.addf %a, %y : tensor<256xf32>
  %g = arith.mulf %b, %x : tensor<256xf32>
  %m2 = arith.addf %m, %g : tensor<256xf32>
  %w2 = arith.subf %w, %m2 : tensor<256xf32>
  return %b, %w2, %m2 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
