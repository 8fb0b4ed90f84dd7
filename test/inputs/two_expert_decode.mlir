// A routed MoE decode step in the form `hyperoffload-gen --experts routed`
// writes: one MoE layer of two experts, top-1; each expert's work is an
// scf.if tagged with its (layer, expert), its weights an argument with the
// same tag (64x64 f32: 16 KiB each). Before the router: %a; between and
// after the experts: the combine.
func.func @decode(%x: tensor<1x64xf32>, %r0: i1, %r1: i1,
    %w0: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 0>, hyperoffload.tier = #hyperoffload.tier<remote>},
    %w1: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 1>, hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<1x64xf32> attributes {hyperoffload.moe = {experts = 2 : i64, top_k = 1 : i64, routed = true}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %a = arith.mulf %x, %x : tensor<1x64xf32>
  %y0 = scf.if %r0 -> (tensor<1x64xf32>) {
    %m0 = linalg.matmul ins(%a, %w0 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m0 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 0>}
  %s0 = arith.addf %a, %y0 : tensor<1x64xf32>
  %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
    %m1 = linalg.matmul ins(%a, %w1 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m1 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 1>}
  %s1 = arith.addf %s0, %y1 : tensor<1x64xf32>
  %out = arith.mulf %s1, %s1 : tensor<1x64xf32>
  func.return %out : tensor<1x64xf32>
}
