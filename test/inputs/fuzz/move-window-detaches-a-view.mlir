// Found by fuzz/differential.py (program 435 of seed 1); see test/python/fuzz/test_reported_bugs.py.
func.func @dag(%a0: tensor<16x16xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}, %a1: tensor<16x16xf32>, %a2: tensor<16x16xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}, %a3: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}, tensor<16x16xf32>) {
  %t1 = arith.addf %a1, %a3 : tensor<16x16xf32>
  %c2 = tensor.collapse_shape %t1 [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  %x3 = tensor.expand_shape %c2 [[0, 1]] output_shape [16, 16] : tensor<256xf32> into tensor<16x16xf32>
  %e4 = tensor.empty() : tensor<16x16xf32>
  %t9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t1, %a3 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e4 : tensor<16x16xf32>) {
  ^bb0(%b5: f32, %b6: f32, %b7: f32):
    %s8 = arith.addf %b5, %b6 : f32
    linalg.yield %s8 : f32
  } -> tensor<16x16xf32>
  %c10 = tensor.collapse_shape %t1 [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  %x11 = tensor.expand_shape %c10 [[0, 1]] output_shape [16, 16] : tensor<256xf32> into tensor<16x16xf32>
  %e12 = tensor.empty() : tensor<16xf32>
  %c13 = arith.constant -3.000000000e+38 : f32
  %f14 = linalg.fill ins(%c13 : f32) outs(%e12 : tensor<16xf32>) -> tensor<16xf32>
  %t18 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x11 : tensor<16x16xf32>) outs(%f14 : tensor<16xf32>) {
  ^bb0(%b15: f32, %b16: f32):
    %s17 = arith.maximumf %b16, %b15 : f32
    linalg.yield %s17 : f32
  } -> tensor<16xf32>
  %e19 = tensor.empty() : tensor<16x16xf32>
  %t24 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x11, %t18 : tensor<16x16xf32>, tensor<16xf32>) outs(%e19 : tensor<16x16xf32>) {
  ^bb0(%b20: f32, %b21: f32, %b22: f32):
    %s23 = arith.subf %b20, %b21 : f32
    linalg.yield %s23 : f32
  } -> tensor<16x16xf32>
  %e25 = tensor.empty() : tensor<16x16xf32>
  %t29 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t24 : tensor<16x16xf32>) outs(%e25 : tensor<16x16xf32>) {
  ^bb0(%b26: f32, %b27: f32):
    %s28 = math.exp %b26 : f32
    linalg.yield %s28 : f32
  } -> tensor<16x16xf32>
  %e30 = tensor.empty() : tensor<16xf32>
  %c31 = arith.constant 0.000000000e+00 : f32
  %f32 = linalg.fill ins(%c31 : f32) outs(%e30 : tensor<16xf32>) -> tensor<16xf32>
  %t36 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t29 : tensor<16x16xf32>) outs(%f32 : tensor<16xf32>) {
  ^bb0(%b33: f32, %b34: f32):
    %s35 = arith.addf %b34, %b33 : f32
    linalg.yield %s35 : f32
  } -> tensor<16xf32>
  %e37 = tensor.empty() : tensor<16x16xf32>
  %t42 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t29, %t36 : tensor<16x16xf32>, tensor<16xf32>) outs(%e37 : tensor<16x16xf32>) {
  ^bb0(%b38: f32, %b39: f32, %b40: f32):
    %s41 = arith.divf %b38, %b39 : f32
    linalg.yield %s41 : f32
  } -> tensor<16x16xf32>
  %e43 = tensor.empty() : tensor<16x16xf32>
  %t51 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t42 : tensor<16x16xf32>) outs(%e43 : tensor<16x16xf32>) {
  ^bb0(%b44: f32, %b45: f32):
    %s47 = arith.constant 1.000000000e+00 : f32
    %s48 = arith.negf %b44 : f32
    %s49 = math.exp %s48 : f32
    %s50 = arith.addf %s47, %s49 : f32
    %s46 = arith.divf %b44, %s50 : f32
    linalg.yield %s46 : f32
  } -> tensor<16x16xf32>
  %e52 = tensor.empty() : tensor<16x16xf32>
  %t57 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x11, %t51 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e52 : tensor<16x16xf32>) {
  ^bb0(%b53: f32, %b54: f32, %b55: f32):
    %s56 = arith.addf %b53, %b54 : f32
    linalg.yield %s56 : f32
  } -> tensor<16x16xf32>
  %e58 = tensor.empty() : tensor<16xf32>
  %c59 = arith.constant -3.000000000e+38 : f32
  %f60 = linalg.fill ins(%c59 : f32) outs(%e58 : tensor<16xf32>) -> tensor<16xf32>
  %t64 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t42 : tensor<16x16xf32>) outs(%f60 : tensor<16xf32>) {
  ^bb0(%b61: f32, %b62: f32):
    %s63 = arith.maximumf %b62, %b61 : f32
    linalg.yield %s63 : f32
  } -> tensor<16xf32>
  %e65 = tensor.empty() : tensor<16x16xf32>
  %t70 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t42, %t64 : tensor<16x16xf32>, tensor<16xf32>) outs(%e65 : tensor<16x16xf32>) {
  ^bb0(%b66: f32, %b67: f32, %b68: f32):
    %s69 = arith.subf %b66, %b67 : f32
    linalg.yield %s69 : f32
  } -> tensor<16x16xf32>
  %e71 = tensor.empty() : tensor<16x16xf32>
  %t75 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t70 : tensor<16x16xf32>) outs(%e71 : tensor<16x16xf32>) {
  ^bb0(%b72: f32, %b73: f32):
    %s74 = math.exp %b72 : f32
    linalg.yield %s74 : f32
  } -> tensor<16x16xf32>
  %e76 = tensor.empty() : tensor<16xf32>
  %c77 = arith.constant 0.000000000e+00 : f32
  %f78 = linalg.fill ins(%c77 : f32) outs(%e76 : tensor<16xf32>) -> tensor<16xf32>
  %t82 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t75 : tensor<16x16xf32>) outs(%f78 : tensor<16xf32>) {
  ^bb0(%b79: f32, %b80: f32):
    %s81 = arith.addf %b80, %b79 : f32
    linalg.yield %s81 : f32
  } -> tensor<16xf32>
  %e83 = tensor.empty() : tensor<16x16xf32>
  %t88 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t75, %t82 : tensor<16x16xf32>, tensor<16xf32>) outs(%e83 : tensor<16x16xf32>) {
  ^bb0(%b84: f32, %b85: f32, %b86: f32):
    %s87 = arith.divf %b84, %b85 : f32
    linalg.yield %s87 : f32
  } -> tensor<16x16xf32>
  %e89 = tensor.empty() : tensor<16x16xf32>
  %c90 = arith.constant 0.000000000e+00 : f32
  %f91 = linalg.fill ins(%c90 : f32) outs(%e89 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %t97 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t57, %t88 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f91 : tensor<16x16xf32>) {
  ^bb0(%b92: f32, %b93: f32, %b94: f32):
    %s95 = arith.mulf %b92, %b93 : f32
    %s96 = arith.addf %b94, %s95 : f32
    linalg.yield %s96 : f32
  } -> tensor<16x16xf32>
  %e98 = tensor.empty() : tensor<16x16xf32>
  %c99 = arith.constant 0.000000000e+00 : f32
  %f100 = linalg.fill ins(%c99 : f32) outs(%e98 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %t101 = linalg.matmul ins(%t97, %t88 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f100 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e102 = tensor.empty() : tensor<16x16xf32>
  %t107 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t97, %t97 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e102 : tensor<16x16xf32>) {
  ^bb0(%b103: f32, %b104: f32, %b105: f32):
    %s106 = arith.addf %b103, %b104 : f32
    linalg.yield %s106 : f32
  } -> tensor<16x16xf32>
  %e108 = tensor.empty() : tensor<16x16xf32>
  %t113 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t97, %t97 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e108 : tensor<16x16xf32>) {
  ^bb0(%b109: f32, %b110: f32, %b111: f32):
    %s112 = arith.maximumf %b109, %b110 : f32
    linalg.yield %s112 : f32
  } -> tensor<16x16xf32>
  %e114 = tensor.empty() : tensor<16x16xf32>
  %t119 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t101, %t97 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e114 : tensor<16x16xf32>) {
  ^bb0(%b115: f32, %b116: f32, %b117: f32):
    %s118 = arith.maximumf %b115, %b116 : f32
    linalg.yield %s118 : f32
  } -> tensor<16x16xf32>
  %e120 = tensor.empty() : tensor<16x16xf32>
  %c121 = arith.constant 0.000000000e+00 : f32
  %f122 = linalg.fill ins(%c121 : f32) outs(%e120 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %t128 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t97, %t113 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f122 : tensor<16x16xf32>) {
  ^bb0(%b123: f32, %b124: f32, %b125: f32):
    %s126 = arith.mulf %b123, %b124 : f32
    %s127 = arith.addf %b125, %s126 : f32
    linalg.yield %s127 : f32
  } -> tensor<16x16xf32>
  %e129 = tensor.empty() : tensor<16x16xf32>
  %t134 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t51, %t88 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e129 : tensor<16x16xf32>) {
  ^bb0(%b130: f32, %b131: f32, %b132: f32):
    %s133 = arith.maximumf %b130, %b131 : f32
    linalg.yield %s133 : f32
  } -> tensor<16x16xf32>
  func.return %t134, %x3, %t128 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
