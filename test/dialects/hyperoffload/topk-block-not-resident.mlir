// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A top-k decode step reads the blocks it chose only through a gather
// (docs/dialect.md, "Blocks chosen at run time"). Reading a block of the
// pool in place (here block 7, the tail) is reading a remote copy: a
// located error.
func.func @block_sliced_from_the_pool(%q: tensor<2x16xf32>,
    %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, t, d) -> (h, d)>, affine_map<(h, t, d) -> (7, h, t, d)>, affine_map<(h, t, d) -> (h, t)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k_pool : tensor<2x16xf32>, !hyperoffload.remote<tensor<8x2x4x16xf32>>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}
// CHECK: topk-block-not-resident.mlir:13:3: error: 'linalg.generic' reads %k_pool, a remote copy (!hyperoffload.remote<tensor<8x2x4x16xf32>>); compute reads only device-resident tensors, prefetch it first

// -----

// Blocks gathered ahead are for the next call: their copy overlaps this
// call, so this call may not read them.
func.func private @predict(tensor<8xf32>) -> tensor<2xi64>
func.func @read_ahead_blocks(%bound: tensor<8xf32>,
    %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>})
    -> tensor<2x2x4x16xf32> {
  %predicted = func.call @predict(%bound) : (tensor<8xf32>) -> tensor<2xi64>
  %next = hyperoffload.gather %k_pool[%predicted] {ahead} : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
  %twice = arith.addf %next, %next : tensor<2x2x4x16xf32>
  func.return %twice : tensor<2x2x4x16xf32>
}
// CHECK: topk-block-not-resident.mlir:34:3: error: 'arith.addf' reads %next, blocks gathered ahead for the next call: they are not resident in this one; gather the blocks this call reads without 'ahead' (resident blocks, or fetched on demand)

// -----

// Gathered blocks read after their detach: the error is at the detach.
func.func @gathered_blocks_read_after_detach(%chosen: tensor<2xi64>,
    %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>})
    -> tensor<2x2x4x16xf32> {
  %k = hyperoffload.gather %k_pool[%chosen] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
  hyperoffload.detach %k : tensor<2x2x4x16xf32>
  %twice = arith.addf %k, %k : tensor<2x2x4x16xf32>
  func.return %twice : tensor<2x2x4x16xf32>
}
// CHECK: topk-block-not-resident.mlir:46:3: error: detach of live data that no store has persisted: %k is still used by 'arith.addf' after it

// -----

func.func @gather_of_the_wrong_shape(%chosen: tensor<2xi64>, %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>>) -> tensor<3x2x4x16xf32> {
  %k = hyperoffload.gather %k_pool[%chosen] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<3x2x4x16xf32>
  func.return %k : tensor<3x2x4x16xf32>
}
// CHECK: topk-block-not-resident.mlir:55:3: error: 'hyperoffload.gather': gather of 2 blocks of tensor<8x2x4x16xf32> yields tensor<2x2x4x16xf32>, not tensor<3x2x4x16xf32>

// -----

func.func @resident_blocks_of_another_shape(%chosen: tensor<2xi64>, %hot: tensor<3x2x4x8xf32>, %ids: tensor<3xi64>, %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>>) -> tensor<2x2x4x16xf32> {
  %k = hyperoffload.gather %k_pool[%chosen] resident %hot[%ids] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64>, tensor<3x2x4x8xf32>, tensor<3xi64> -> tensor<2x2x4x16xf32>
  func.return %k : tensor<2x2x4x16xf32>
}
// CHECK: topk-block-not-resident.mlir:63:3: error: 'hyperoffload.gather': resident blocks of tensor<8x2x4x16xf32> indexed by tensor<3xi64> are tensor<3x2x4x16xf32>, not tensor<3x2x4x8xf32>

// -----

func.func @indices_of_floats(%chosen: tensor<2xf32>, %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>>) -> tensor<2x2x4x16xf32> {
  %k = hyperoffload.gather %k_pool[%chosen] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xf32> -> tensor<2x2x4x16xf32>
  func.return %k : tensor<2x2x4x16xf32>
}
// CHECK: topk-block-not-resident.mlir:71:3: error: 'hyperoffload.gather': gather's indices are a 1-D tensor of integers, got tensor<2xf32>
