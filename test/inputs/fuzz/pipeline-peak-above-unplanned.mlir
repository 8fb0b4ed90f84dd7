// Found by fuzz/differential.py (a generated DAG); see test/python/fuzz/test_reported_bugs.py.
func.func @dag(%a0: tensor<16x16xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %t1 = arith.mulf %a0, %a0 : tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %t7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a0 : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%b3: f32, %b4: f32):
    %s6 = arith.constant 0.000000000e+00 : f32
    %s5 = arith.maximumf %b3, %s6 : f32
    linalg.yield %s5 : f32
  } -> tensor<16x16xf32>
  %e8 = tensor.empty() : tensor<16xf32>
  %c9 = arith.constant -3.000000000e+38 : f32
  %f10 = linalg.fill ins(%c9 : f32) outs(%e8 : tensor<16xf32>) -> tensor<16xf32>
  %t14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t1 : tensor<16x16xf32>) outs(%f10 : tensor<16xf32>) {
  ^bb0(%b11: f32, %b12: f32):
    %s13 = arith.maximumf %b12, %b11 : f32
    linalg.yield %s13 : f32
  } -> tensor<16xf32>
  %e15 = tensor.empty() : tensor<16x16xf32>
  %t20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t1, %t14 : tensor<16x16xf32>, tensor<16xf32>) outs(%e15 : tensor<16x16xf32>) {
  ^bb0(%b16: f32, %b17: f32, %b18: f32):
    %s19 = arith.subf %b16, %b17 : f32
    linalg.yield %s19 : f32
  } -> tensor<16x16xf32>
  %e21 = tensor.empty() : tensor<16x16xf32>
  %t25 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t20 : tensor<16x16xf32>) outs(%e21 : tensor<16x16xf32>) {
  ^bb0(%b22: f32, %b23: f32):
    %s24 = math.exp %b22 : f32
    linalg.yield %s24 : f32
  } -> tensor<16x16xf32>
  %e26 = tensor.empty() : tensor<16xf32>
  %c27 = arith.constant 0.000000000e+00 : f32
  %f28 = linalg.fill ins(%c27 : f32) outs(%e26 : tensor<16xf32>) -> tensor<16xf32>
  %t32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t25 : tensor<16x16xf32>) outs(%f28 : tensor<16xf32>) {
  ^bb0(%b29: f32, %b30: f32):
    %s31 = arith.addf %b30, %b29 : f32
    linalg.yield %s31 : f32
  } -> tensor<16xf32>
  %e33 = tensor.empty() : tensor<16x16xf32>
  %t38 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t25, %t32 : tensor<16x16xf32>, tensor<16xf32>) outs(%e33 : tensor<16x16xf32>) {
  ^bb0(%b34: f32, %b35: f32, %b36: f32):
    %s37 = arith.divf %b34, %b35 : f32
    linalg.yield %s37 : f32
  } -> tensor<16x16xf32>
  %e39 = tensor.empty() : tensor<16x16xf32>
  %t44 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a0 : tensor<16x16xf32>) outs(%e39 : tensor<16x16xf32>) {
  ^bb0(%b40: f32, %b41: f32):
    %s43 = arith.constant 0.000000000e+00 : f32
    %s42 = arith.maximumf %b40, %s43 : f32
    linalg.yield %s42 : f32
  } -> tensor<16x16xf32>
  %e45 = tensor.empty() : tensor<16x16xf32>
  %t50 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t7, %t38 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e45 : tensor<16x16xf32>) {
  ^bb0(%b46: f32, %b47: f32, %b48: f32):
    %s49 = arith.addf %b46, %b47 : f32
    linalg.yield %s49 : f32
  } -> tensor<16x16xf32>
  func.return %t50, %t1 : tensor<16x16xf32>, tensor<16x16xf32>
}
