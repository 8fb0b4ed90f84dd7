// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A KV block is an argument like any other (docs/dialect.md, "KV cache in
// blocks"): a block that lives in the remote pool has a remote type, and a
// compute op may read it only through a prefetch. Reading it directly is the
// same type error as reading any remote copy.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @block_read_in_place(%q: tensor<4x8xf32>,
    %k3: !hyperoffload.remote<tensor<4x8xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 3>})
    -> tensor<4x8xf32> attributes {hyperoffload.kv_cache = {attention = "blocked", block = 4 : i64, window = 0 : i64, sinks = 0 : i64, kv_len = 16 : i64}} {
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %k3 : tensor<4x8xf32>, !hyperoffload.remote<tensor<4x8xf32>>) outs(%q : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: kv-block-not-resident.mlir:11:3: error: 'linalg.generic' reads %k3, a remote copy (!hyperoffload.remote<tensor<4x8xf32>>); compute reads only device-resident tensors, prefetch it first

// -----

// A block read after its detach: the device copy is gone (the remote block
// is still there, but only a new prefetch makes it readable). The error is
// reported at the detach that dropped the block %s1 still reads.
func.func @block_read_after_detach(%q: tensor<4x8xf32>,
    %k0: !hyperoffload.remote<tensor<4x8xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 0>},
    %k1: !hyperoffload.remote<tensor<4x8xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 1>})
    -> tensor<4x8xf32> {
  %b0 = hyperoffload.prefetch %k0 : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %s0 = linalg.mul ins(%q, %b0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) -> tensor<4x8xf32>
  hyperoffload.detach %b0 : tensor<4x8xf32>
  %b1 = hyperoffload.prefetch %k1 : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %s1 = linalg.mul ins(%s0, %b0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) -> tensor<4x8xf32>
  hyperoffload.detach %b1 : tensor<4x8xf32>
  func.return %s1 : tensor<4x8xf32>
}
// CHECK: kv-block-not-resident.mlir:32:3: error: detach of live data that no store has persisted: %b0 is still used by 'linalg.mul' after it
