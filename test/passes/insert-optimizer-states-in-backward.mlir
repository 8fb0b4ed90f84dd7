// RUN: hyperoffload-opt %s -p 'hyperoffload-insert' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline' | filecheck %s --check-prefix=PIPE

// A two-layer training step with the optimizer step in the backward pass,
// written by hand in the order `hyperoffload-gen --optimizer adamw
// --optimizer-in-backward` exports: layer 2's AdamW update runs as soon as
// its gradient %g2 is complete, before layer 1's backward pass (%dh1, %g1),
// and layer 1's update last (compare insert-optimizer-states.mlir, where
// every update follows the whole backward pass). The plan fetches each
// parameter's moments just before its update reads them and stores the new
// moments and weight right after the update writes them; layer 1's backward
// pass runs after layer 2's stores are issued, so the stores overlap it,
// and layer 1's moments are fetched only after layer 2's are stored and
// detached: one parameter's states are resident at a time.
// CHECK-LABEL: func.func @adamw_step_in_backward
// CHECK-NOT:     hyperoffload.prefetch %m
// CHECK:         %loss = arith.mulf %h2, %h2
// CHECK-NOT:     hyperoffload.prefetch %m1
// CHECK:         %m2_1 = hyperoffload.prefetch %m2
// CHECK:         %g2 = arith.mulf %dh2, %h1
// CHECK:         %gm2 = arith.subf %g2, %m2_1
// CHECK:         %v2_1 = hyperoffload.prefetch %v2
// CHECK:         %m2n = arith.addf %m2_1, %dm2
// CHECK-NEXT:    %m2n_remote = hyperoffload.store %m2n
// CHECK-NEXT:    hyperoffload.detach %m2_1
// CHECK:         %v2n = arith.addf %vb2, %ggb2
// CHECK-NEXT:    %v2n_remote = hyperoffload.store %v2n
// CHECK:         %w2n = arith.subf %w2_2, %u2
// CHECK-NEXT:    %w2n_remote = hyperoffload.store %w2n
// CHECK-NEXT:    hyperoffload.detach %w2n
// CHECK-NEXT:    %dh1 = arith.mulf %dh2, %w2_2
// CHECK:         %m1_1 = hyperoffload.prefetch %m1
// CHECK-NEXT:    %g1 = arith.mulf %dh1, %x
// CHECK:         %m1n = arith.addf %m1_1, %dm1
// CHECK-NEXT:    %m1n_remote = hyperoffload.store %m1n
// CHECK:         %v1n = arith.addf %vb1, %ggb1
// CHECK-NEXT:    %v1n_remote = hyperoffload.store %v1n
// CHECK:         %w1n = arith.subf %w1_2, %u1
// CHECK-NEXT:    %w1n_remote = hyperoffload.store %w1n
// CHECK:         func.return %loss, %w1n_remote, %w2n_remote, %m1n_remote, %m2n_remote, %v1n_remote, %v2n_remote

// The pipeline moves the prefetches ahead as far as hiding them needs on
// the default device (%m2's to the end of the forward pass, %m1's to right
// after layer 2's last store, ahead of layer 1's backward pass); every
// store stays right after the update that writes it, before the layer
// below's backward pass.
// PIPE-LABEL: func.func @adamw_step_in_backward
// PIPE-NOT:     hyperoffload.prefetch %m
// PIPE:         %loss = arith.mulf %h2, %h2
// PIPE-NEXT:    %m2_1 = hyperoffload.prefetch %m2
// PIPE-NEXT:    %dh2 = arith.addf %h2, %h2
// PIPE:         %m2n = arith.addf %m2_1, %dm2
// PIPE-NEXT:    %m2n_remote = hyperoffload.store %m2n
// PIPE:         %v2n = arith.addf %vb2, %ggb2
// PIPE-NEXT:    %v2n_remote = hyperoffload.store %v2n
// PIPE:         %w2n = arith.subf %w2_2, %u2
// PIPE-NEXT:    %w2n_remote = hyperoffload.store %w2n
// PIPE-NEXT:    hyperoffload.detach %w2n
// PIPE-NEXT:    %m1_1 = hyperoffload.prefetch %m1
// PIPE-NEXT:    %dh1 = arith.mulf %dh2, %w2_2
// PIPE:         %g1 = arith.mulf %dh1, %x
// PIPE:         %m1n = arith.addf %m1_1, %dm1
// PIPE-NEXT:    %m1n_remote = hyperoffload.store %m1n
// PIPE:         %w1n = arith.subf %w1_2, %u1
// PIPE-NEXT:    %w1n_remote = hyperoffload.store %w1n
// PIPE:         func.return %loss, %w1n_remote, %w2n_remote, %m1n_remote, %m2n_remote, %v1n_remote, %v2n_remote
func.func @adamw_step_in_backward(%x: tensor<256xf32>,
    %w1: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
    %w2: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
    %m1: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
    %m2: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
    %v1: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
    %v2: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>})
    -> (tensor<256xf32>,
        tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %one_minus_beta1 = arith.constant dense<0.1> : tensor<256xf32>
  %beta2 = arith.constant dense<0.999> : tensor<256xf32>
  %one_minus_beta2 = arith.constant dense<0.001> : tensor<256xf32>
  // forward: layer 1, layer 2, the loss
  %h1 = arith.mulf %x, %w1 : tensor<256xf32>
  %h2 = arith.mulf %h1, %w2 : tensor<256xf32>
  %loss = arith.mulf %h2, %h2 : tensor<256xf32>
  // backward of layer 2: its weight's gradient is complete
  %dh2 = arith.addf %h2, %h2 : tensor<256xf32>
  %g2 = arith.mulf %dh2, %h1 : tensor<256xf32>
  // layer 2's AdamW update, in the backward pass
  %gm2 = arith.subf %g2, %m2 : tensor<256xf32>
  %dm2 = arith.mulf %gm2, %one_minus_beta1 : tensor<256xf32>
  %m2n = arith.addf %m2, %dm2 : tensor<256xf32>
  %vb2 = arith.mulf %v2, %beta2 : tensor<256xf32>
  %gg2 = arith.mulf %g2, %g2 : tensor<256xf32>
  %ggb2 = arith.mulf %gg2, %one_minus_beta2 : tensor<256xf32>
  %v2n = arith.addf %vb2, %ggb2 : tensor<256xf32>
  %root2 = math.sqrt %v2n : tensor<256xf32>
  %u2 = arith.divf %m2n, %root2 : tensor<256xf32>
  %w2n = arith.subf %w2, %u2 : tensor<256xf32>
  // backward of layer 1 (it reads the old %w2), then layer 1's update
  %dh1 = arith.mulf %dh2, %w2 : tensor<256xf32>
  %g1 = arith.mulf %dh1, %x : tensor<256xf32>
  %gm1 = arith.subf %g1, %m1 : tensor<256xf32>
  %dm1 = arith.mulf %gm1, %one_minus_beta1 : tensor<256xf32>
  %m1n = arith.addf %m1, %dm1 : tensor<256xf32>
  %vb1 = arith.mulf %v1, %beta2 : tensor<256xf32>
  %gg1 = arith.mulf %g1, %g1 : tensor<256xf32>
  %ggb1 = arith.mulf %gg1, %one_minus_beta2 : tensor<256xf32>
  %v1n = arith.addf %vb1, %ggb1 : tensor<256xf32>
  %root1 = math.sqrt %v1n : tensor<256xf32>
  %u1 = arith.divf %m1n, %root1 : tensor<256xf32>
  %w1n = arith.subf %w1, %u1 : tensor<256xf32>
  func.return %loss, %w1n, %w2n, %m1n, %m2n, %v1n, %v2n : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
