// RUN: hyperoffload-opt %s --split-input-file -p hyperoffload-insert | filecheck %s
// Idempotence: a second run inserts nothing new.
// RUN: hyperoffload-opt %s --split-input-file -p hyperoffload-insert | hyperoffload-opt --split-input-file -p hyperoffload-insert | filecheck %s

// A parameter living in the remote pool: fetched before each cluster of uses
// (one op ahead), released after the cluster. The two clusters are far enough
// apart (3 ops, ~30 us on ascend-910c) to hide the second fetch (~10 us).
// CHECK-LABEL: func.func @param
// CHECK-SAME:    %w: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-NEXT:    %w_1 = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
// CHECK-NEXT:    %a = arith.mulf %x, %w_1
// CHECK-NEXT:    %b = arith.mulf %a, %w_1
// CHECK-NEXT:    hyperoffload.detach %w_1
// CHECK-NEXT:    %c = arith.addf %b, %b
// CHECK-NEXT:    %d = arith.addf %c, %c
// CHECK-NEXT:    %w_2 = hyperoffload.prefetch %w
// CHECK-NEXT:    %e = arith.addf %d, %d
// CHECK-NEXT:    %f = arith.mulf %e, %w_2
// CHECK-NEXT:    hyperoffload.detach %w_2
// CHECK-NEXT:    func.return %f
func.func @param(%x: tensor<256xf32>, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a = arith.mulf %x, %w : tensor<256xf32>
  %b = arith.mulf %a, %w : tensor<256xf32>
  %c = arith.addf %b, %b : tensor<256xf32>
  %d = arith.addf %c, %c : tensor<256xf32>
  %e = arith.addf %d, %d : tensor<256xf32>
  %f = arith.mulf %e, %w : tensor<256xf32>
  func.return %f : tensor<256xf32>
}

// -----

// Optimizer state: fetched just for the update, the update written back
// after it is produced, and the caller gets the remote copy (the result
// attribute says it lives in `remote`).
// CHECK-LABEL: func.func @adam
// CHECK-SAME:    %m: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "optimizer"}
// CHECK-SAME:    -> (tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
// CHECK-NEXT:    %m_1 = hyperoffload.prefetch %m
// CHECK-NEXT:    %m2 = arith.addf %m_1, %g
// CHECK-NEXT:    %m2_remote = hyperoffload.store %m2 : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>>
// CHECK-NEXT:    hyperoffload.detach %m_1
// CHECK-NEXT:    %p2 = arith.subf %p, %m2
// CHECK-NEXT:    hyperoffload.detach %m2
// CHECK-NEXT:    func.return %p2, %m2_remote : tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>>
func.func @adam(%p: tensor<256xf32>, %g: tensor<256xf32>,
                %m: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "optimizer"})
    -> (tensor<256xf32>, tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %m2 = arith.addf %m, %g : tensor<256xf32>
  %p2 = arith.subf %p, %m2 : tensor<256xf32>
  func.return %p2, %m2 : tensor<256xf32>, tensor<256xf32>
}

// -----

// A written-back result read later through a view (a new KV entry that the
// next op reads reshaped) is released after the view's last use.
// CHECK-LABEL: func.func @written_back_view
// CHECK-NEXT:    %k = arith.mulf %x, %x
// CHECK-NEXT:    %k_remote = hyperoffload.store %k
// CHECK-NEXT:    %v = tensor.expand_shape %k
// CHECK-NEXT:    %y = arith.addf %v, %v
// CHECK-NEXT:    hyperoffload.detach %k
// CHECK-NEXT:    func.return %y, %k_remote
func.func @written_back_view(%x: tensor<256xf32>)
    -> (tensor<16x16xf32>, tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %k = arith.mulf %x, %x : tensor<256xf32>
  %v = tensor.expand_shape %k [[0, 1]] output_shape [16, 16] : tensor<256xf32> into tensor<16x16xf32>
  %y = arith.addf %v, %v : tensor<16x16xf32>
  func.return %y, %k : tensor<16x16xf32>, tensor<256xf32>
}

// -----

// KV cache, one argument per layer: only the window the current layer's
// attention step reads is resident; the next layer's block is fetched one op
// ahead and each block is released after its use.
// CHECK-LABEL: func.func @decode
// CHECK-NEXT:    %k0_1 = hyperoffload.prefetch %k0
// CHECK-NEXT:    %s0 = arith.mulf %q, %k0_1
// CHECK-NEXT:    hyperoffload.detach %k0_1
// CHECK-NEXT:    %k1_1 = hyperoffload.prefetch %k1
// CHECK-NEXT:    %t0 = arith.addf %s0, %s0
// CHECK-NEXT:    %s1 = arith.mulf %t0, %k1_1
// CHECK-NEXT:    hyperoffload.detach %k1_1
// CHECK-NEXT:    %k2_1 = hyperoffload.prefetch %k2
// CHECK-NEXT:    %t1 = arith.addf %s1, %s1
// CHECK-NEXT:    %s2 = arith.mulf %t1, %k2_1
// CHECK-NEXT:    hyperoffload.detach %k2_1
// CHECK-NEXT:    %t2 = arith.addf %s2, %s2
// CHECK-NEXT:    func.return %t2
func.func @decode(%q: tensor<256xf32>,
                  %k0: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"},
                  %k1: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"},
                  %k2: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}) -> tensor<256xf32> {
  %s0 = arith.mulf %q, %k0 : tensor<256xf32>
  %t0 = arith.addf %s0, %s0 : tensor<256xf32>
  %s1 = arith.mulf %t0, %k1 : tensor<256xf32>
  %t1 = arith.addf %s1, %s1 : tensor<256xf32>
  %s2 = arith.mulf %t1, %k2 : tensor<256xf32>
  %t2 = arith.addf %s2, %s2 : tensor<256xf32>
  func.return %t2 : tensor<256xf32>
}

// -----

// With a target the unmodified program already meets, activations stay.
// CHECK-LABEL: func.func @fits
// CHECK-NEXT:    %a = arith.addf %x, %x
// CHECK-NEXT:    %b = arith.mulf %a, %a
// CHECK-NEXT:    %c = arith.addf %b, %a
// CHECK-NEXT:    func.return %c
func.func @fits(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = arith.addf %x, %x : tensor<256xf32>
  %b = arith.mulf %a, %a : tensor<256xf32>
  %c = arith.addf %b, %a : tensor<256xf32>
  func.return %c : tensor<256xf32>
}

// -----

// A parameter read inside a loop body: fetched before the loop (a top-level
// op), the body reads the fetched copy, released after the loop.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %w_1 = hyperoffload.prefetch %w
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<256xf32>) {
// CHECK-NEXT:      %s = arith.mulf %acc, %w_1 : tensor<256xf32>
// CHECK-NEXT:      scf.yield %s : tensor<256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    hyperoffload.detach %w_1
// CHECK-NEXT:    func.return %r
func.func @loop(%x: tensor<256xf32>, %n: index, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<256xf32>) {
    %s = arith.mulf %acc, %w : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  func.return %r : tensor<256xf32>
}
