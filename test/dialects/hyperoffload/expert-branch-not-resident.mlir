// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s

// An expert's branch reads its weights only if they are resident (a device
// tensor from above) or prefetched in the branch (docs/dialect.md,
// "Conditional regions (experts)"). Here the cold expert's branch reads its
// remote weights in place: the error is at the read and names the branch.
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @cold_expert_not_prefetched(%x: tensor<2x4xf32>, %routed: i1, %w_hot: tensor<4x4xf32>,
                                      %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %hot : tensor<2x4xf32>
  } else {
    %cold = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w_cold : tensor<2x4xf32>, !hyperoffload.remote<tensor<4x4xf32>>) outs(%acc : tensor<2x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<2x4xf32>
    scf.yield %cold : tensor<2x4xf32>
  }
  func.return %y : tensor<2x4xf32>
}
// CHECK: expert-branch-not-resident.mlir:20:5: error: 'linalg.generic' inside scf.if (else branch) reads %w_cold, a remote copy (!hyperoffload.remote<tensor<4x4xf32>>); compute reads only device-resident tensors: prefetch it in this branch, or speculatively before the scf.if

// -----

// A prefetch in one branch is local to it: the other branch cannot read it
// (SSA scopes it), and reading the remote argument there is the same error.
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @prefetched_in_the_other_branch(%x: tensor<2x4xf32>, %routed: i1,
                                          %w: !hyperoffload.remote<tensor<4x4xf32>>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
    %t = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    hyperoffload.detach %wd : tensor<4x4xf32>
    scf.yield %t : tensor<2x4xf32>
  } else {
    %f = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<2x4xf32>, !hyperoffload.remote<tensor<4x4xf32>>) outs(%acc : tensor<2x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<2x4xf32>
    scf.yield %f : tensor<2x4xf32>
  }
  func.return %y : tensor<2x4xf32>
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 11]]:5: error: 'linalg.generic' inside scf.if (else branch) reads %w, a remote copy

// -----

// A detach inside a branch of a tensor defined above it: after the scf.if
// the detach may have run, so the read there is of dropped data (no store
// persisted it). The error is at the detach.
func.func @detach_in_branch_then_read_after(%x: tensor<2x4xf32>, %routed: i1,
                                            %w: !hyperoffload.remote<tensor<4x4xf32>>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %t = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    hyperoffload.detach %wd : tensor<4x4xf32>
    scf.yield %t : tensor<2x4xf32>
  } else {
    scf.yield %acc : tensor<2x4xf32>
  }
  %z = linalg.matmul ins(%y, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %z : tensor<2x4xf32>
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 8]]:5: error: detach of live data that no store has persisted: %wd is still used by 'linalg.matmul' after it (the detach inside scf.if (then branch) may have run)

// -----

// The same after a store persisted the tensor before the detach (on every
// path): the read after the scf.if must read a prefetch of the stored copy.
// The error is at the read.
func.func @stored_then_detached_in_branch(%x: tensor<4xf32>, %routed: i1) -> tensor<4xf32> {
  %t = arith.addf %x, %x : tensor<4xf32>
  %h = hyperoffload.store %t : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  scf.if %routed {
    hyperoffload.detach %t : tensor<4xf32>
    scf.yield
  }
  %z = arith.mulf %t, %t : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 3]]:3: error: %t is used after its detach; read a prefetch of its stored copy instead (the detach inside scf.if (then branch) may have run)

// -----

// A store inside an earlier branch persisted the tensor on that path only:
// the detach drops the only copy on the other one.
func.func @stored_on_one_path_only(%x: tensor<4xf32>, %routed: i1) -> tensor<4xf32> {
  %t = arith.addf %x, %x : tensor<4xf32>
  scf.if %routed {
    %h = hyperoffload.store %t : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
    scf.yield
  }
  scf.if %routed {
    hyperoffload.detach %t : tensor<4xf32>
    scf.yield
  }
  %z = arith.mulf %t, %t : tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 6]]:5: error: detach of live data that no store has persisted: %t is still used by 'arith.mulf' after it (the detach inside scf.if (then branch) may have run)

// -----

// Later in the branch itself, as in any block.
func.func @read_later_in_the_branch(%x: tensor<4xf32>, %routed: i1) -> tensor<4xf32> {
  %t = arith.addf %x, %x : tensor<4xf32>
  %y = scf.if %routed -> (tensor<4xf32>) {
    hyperoffload.detach %t : tensor<4xf32>
    %a = arith.mulf %t, %t : tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 8]]:5: error: detach of live data that no store has persisted: %t is still used by 'arith.mulf' after it (the detach inside scf.if (then branch) may have run)

// -----

// A detach may sit in a branch, never in a loop (inside a branch or not).
func.func @detach_in_a_loop_in_a_branch(%x: tensor<4xf32>, %routed: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.if %routed {
    scf.for %i = %c0 to %n step %c1 {
      hyperoffload.detach %x : tensor<4xf32>
    }
    scf.yield
  }
  func.return
}
// CHECK: expert-branch-not-resident.mlir:[[# @LINE - 6]]:7: error: 'hyperoffload.detach': detach must be in the block that defines its operand or in a branch (scf.if, scf.index_switch) nested in it (a detach inside a loop could drop data a later iteration still reads)
