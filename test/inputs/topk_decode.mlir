// A top-k decode step of one layer in the form `hyperoffload-gen --attention
// topk` exports (docs/frontend.md): 12 cached positions in a pool of 3 blocks
// of 4 (64 f32 = 256 B a block and kind), 1 block selected, the newest
// position's block (2) fixed. The body stands for the step's compute.
func.func @decode(%q: tensor<4x16xf32>,
    %k_pool: tensor<3x4x16xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>},
    %v_pool: tensor<3x4x16xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 1>})
    -> tensor<4x16xf32>
    attributes {hyperoffload.kv_cache = {attention = "topk", block = 4 : i64, topk = 1 : i64, sinks = 0 : i64, recent = 1 : i64, kv_len = 12 : i64}} {
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.add ins(%q, %q : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
