// Found by fuzz/differential.py (a generated DAG); see test/python/fuzz/test_reported_bugs.py.
func.func @dag(%a0: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}, %a1: tensor<4x4xf32>, %a2: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %e1 = tensor.empty() : tensor<4x4xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a2, %a0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
  ^bb0(%b2: f32, %b3: f32, %b4: f32):
    %s5 = arith.maximumf %b2, %b3 : f32
    linalg.yield %s5 : f32
  } -> tensor<4x4xf32>
  %e7 = tensor.empty() : tensor<4x4xf32>
  %t12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a0, %a2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e7 : tensor<4x4xf32>) {
  ^bb0(%b8: f32, %b9: f32, %b10: f32):
    %s11 = arith.addf %b8, %b9 : f32
    linalg.yield %s11 : f32
  } -> tensor<4x4xf32>
  %e13 = tensor.empty() : tensor<4x4xf32>
  %t17 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6 : tensor<4x4xf32>) outs(%e13 : tensor<4x4xf32>) {
  ^bb0(%b14: f32, %b15: f32):
    %s16 = arith.negf %b14 : f32
    linalg.yield %s16 : f32
  } -> tensor<4x4xf32>
  %e18 = tensor.empty() : tensor<4x4xf32>
  %t23 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6 : tensor<4x4xf32>) outs(%e18 : tensor<4x4xf32>) {
  ^bb0(%b19: f32, %b20: f32):
    %s22 = arith.constant 0.000000000e+00 : f32
    %s21 = arith.maximumf %b19, %s22 : f32
    linalg.yield %s21 : f32
  } -> tensor<4x4xf32>
  %e24 = tensor.empty() : tensor<4x4xf32>
  %t29 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6, %a2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e24 : tensor<4x4xf32>) {
  ^bb0(%b25: f32, %b26: f32, %b27: f32):
    %s28 = arith.maximumf %b25, %b26 : f32
    linalg.yield %s28 : f32
  } -> tensor<4x4xf32>
  %c30 = tensor.collapse_shape %a0 [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %x31 = tensor.expand_shape %c30 [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %e32 = tensor.empty() : tensor<4x4xf32>
  %t37 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t29, %t23 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e32 : tensor<4x4xf32>) {
  ^bb0(%b33: f32, %b34: f32, %b35: f32):
    %s36 = arith.subf %b33, %b34 : f32
    linalg.yield %s36 : f32
  } -> tensor<4x4xf32>
  %t38 = arith.addf %t17, %x31 : tensor<4x4xf32>
  %e39 = tensor.empty() : tensor<4x4xf32>
  %t44 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a1 : tensor<4x4xf32>) outs(%e39 : tensor<4x4xf32>) {
  ^bb0(%b40: f32, %b41: f32):
    %s43 = arith.constant 5.000000000e-01 : f32
    %s42 = arith.mulf %b40, %s43 : f32
    linalg.yield %s42 : f32
  } -> tensor<4x4xf32>
  %e45 = tensor.empty() : tensor<4x4xf32>
  %t49 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a0 : tensor<4x4xf32>) outs(%e45 : tensor<4x4xf32>) {
  ^bb0(%b46: f32, %b47: f32):
    %s48 = math.exp %b46 : f32
    linalg.yield %s48 : f32
  } -> tensor<4x4xf32>
  %e50 = tensor.empty() : tensor<4x4xf32>
  %t55 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t49, %t49 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e50 : tensor<4x4xf32>) {
  ^bb0(%b51: f32, %b52: f32, %b53: f32):
    %s54 = arith.subf %b51, %b52 : f32
    linalg.yield %s54 : f32
  } -> tensor<4x4xf32>
  func.return %t55, %t17, %x31 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
