// A decode step of one layer whose cache is in blocks of 4 positions, read
// with a window of 8 positions and 4 sinks at 16 cached positions: the sink
// block 0 and the window's blocks 2 and 3 (block 1 is not read). A block is
// 32 f32 (128 B); a position's key or value entry 8 f32 (32 B).
func.func @decode(
    %q: tensor<32xf32>, %e: tensor<8xf32>,
    %k0: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 0>},
    %k2: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 2>},
    %k3: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 0, 3>},
    %v0: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 1, 0>},
    %v2: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 1, 2>},
    %v3: tensor<32xf32> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_block = array<i64: 0, 1, 3>})
    -> (tensor<32xf32>, tensor<8xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}, tensor<8xf32> {hyperoffload.tier = #hyperoffload.tier<remote>})
    attributes {hyperoffload.kv_cache = {attention = "window", block = 4 : i64, window = 8 : i64, sinks = 4 : i64, kv_len = 16 : i64}} {
  %s0 = arith.mulf %q, %k0 : tensor<32xf32>
  %o0 = arith.mulf %s0, %v0 : tensor<32xf32>
  %s2 = arith.mulf %o0, %k2 : tensor<32xf32>
  %o2 = arith.mulf %s2, %v2 : tensor<32xf32>
  %s3 = arith.mulf %o2, %k3 : tensor<32xf32>
  %o3 = arith.mulf %s3, %v3 : tensor<32xf32>
  %kn = arith.addf %e, %e : tensor<8xf32>
  %vn = arith.mulf %e, %e : tensor<8xf32>
  func.return %o3, %kn, %vn : tensor<32xf32>, tensor<8xf32>, tensor<8xf32>
}
