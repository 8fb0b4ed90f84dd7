// RUN: hyperoffload-opt %s -p 'hyperoffload-insert' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline' | filecheck %s --check-prefix=PIPE

// A training step with AdamW, written by hand in the form hyperoffload-gen
// exports (`--optimizer adamw`): the weight %w and the moments %m, %v live
// in the pool (the moments tagged `hyperoffload.category = "optimizer"`), and
// the updated weight and moments are results tagged with the pool, written
// back where they live. The forward pass (%h, %a, %loss) and the backward
// pass (%dh, %g) never read the moments, so the plan fetches each moment
// after the backward pass, just before its update reads it, and stores the
// new moment right after the update writes it (then frees both copies):
// neither is resident across the forward pass.
// CHECK-LABEL: func.func @adamw_step
// CHECK-SAME:    %m: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-SAME:    %v: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-NOT:     hyperoffload.prefetch %m
// CHECK-NOT:     hyperoffload.prefetch %v
// CHECK:         %g = arith.mulf %dh, %x
// CHECK:         %m_1 = hyperoffload.prefetch %m
// CHECK:         %gm = arith.subf %g, %m_1
// CHECK:         %v_1 = hyperoffload.prefetch %v
// CHECK:         %m1 = arith.addf %m_1, %dm
// CHECK-NEXT:    %m1_remote = hyperoffload.store %m1
// CHECK-NEXT:    hyperoffload.detach %m_1
// CHECK-NEXT:    %vb = arith.mulf %v_1, %beta2
// CHECK-NEXT:    hyperoffload.detach %v_1
// CHECK:         %v1 = arith.addf %vb, %ggb
// CHECK-NEXT:    %v1_remote = hyperoffload.store %v1
// CHECK:         %w1 = arith.subf %w_2, %u
// CHECK-NEXT:    %w1_remote = hyperoffload.store %w1
// CHECK:         func.return %loss, %w1_remote, %m1_remote, %v1_remote

// The pipeline moves each prefetch as far ahead as hiding its transfer needs
// on the default device (ascend-910c: ~10 us per op, ~10 us per 1 KiB
// fetch): %m's into the backward pass, still after the forward pass; the
// stores stay right after the update.
// PIPE-LABEL: func.func @adamw_step
// PIPE-NOT:     hyperoffload.prefetch %m
// PIPE-NOT:     hyperoffload.prefetch %v
// PIPE:         %loss = arith.addf %a, %a
// PIPE:         %m_1 = hyperoffload.prefetch %m
// PIPE:         %gm = arith.subf %g, %m_1
// PIPE:         %m1 = arith.addf %m_1, %dm
// PIPE-NEXT:    %m1_remote = hyperoffload.store %m1
// PIPE-NEXT:    hyperoffload.detach %m_1
// PIPE:         %v1 = arith.addf %vb, %ggb
// PIPE-NEXT:    %v1_remote = hyperoffload.store %v1
// PIPE:         func.return %loss, %w1_remote, %m1_remote, %v1_remote
func.func @adamw_step(%x: tensor<256xf32>,
    %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
    %m: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
    %v: tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>})
    -> (tensor<256xf32>,
        tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>},
        tensor<256xf32> {hyperoffload.category = "optimizer", hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %h = arith.mulf %x, %w : tensor<256xf32>
  %a = arith.mulf %h, %h : tensor<256xf32>
  %loss = arith.addf %a, %a : tensor<256xf32>
  %dh = arith.mulf %h, %loss : tensor<256xf32>
  %g = arith.mulf %dh, %x : tensor<256xf32>
  %one_minus_beta1 = arith.constant dense<0.1> : tensor<256xf32>
  %beta2 = arith.constant dense<0.999> : tensor<256xf32>
  %one_minus_beta2 = arith.constant dense<0.001> : tensor<256xf32>
  %gm = arith.subf %g, %m : tensor<256xf32>
  %dm = arith.mulf %gm, %one_minus_beta1 : tensor<256xf32>
  %m1 = arith.addf %m, %dm : tensor<256xf32>
  %vb = arith.mulf %v, %beta2 : tensor<256xf32>
  %gg = arith.mulf %g, %g : tensor<256xf32>
  %ggb = arith.mulf %gg, %one_minus_beta2 : tensor<256xf32>
  %v1 = arith.addf %vb, %ggb : tensor<256xf32>
  %root = math.sqrt %v1 : tensor<256xf32>
  %u = arith.divf %m1, %root : tensor<256xf32>
  %w1 = arith.subf %w, %u : tensor<256xf32>
  func.return %loss, %w1, %m1, %v1 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
