func.func @dag(%a0: tensor<8x8xf32>, %a1: tensor<8x8xf32>, %a2: tensor<8x8xf32> {hyperoffload.category = "activations"}) -> (tensor<8x8xf32>, tensor<8x8xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a0, %a1 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e1 : tensor<8x8xf32>) {
  ^bb0(%b2: f32, %b3: f32, %b4: f32):
    %s5 = arith.addf %b2, %b3 : f32
    linalg.yield %s5 : f32
  %e1 = tensor.empty() : tensor<8x8xf32>
  } -> tensor<8x8xf32>
  %e7 = tensor.empty() : tensor<8xf32>
  %c8 = arith.constant -3.000000000e+38 : f32
  %f9 = linalg.fill ins(%c8 : f32) outs(%e7 : tensor<8xf32>) -> tensor<8xf32>
  %t13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a2 : tensor<8x8xf32>) outs(%f9 : tensor<8xf32>) {
  ^bb0(%b10: f32, %b11: f32):
    %s12 = arith.maximumf %b11, %b10 : f32
    linalg.yield %s12 : f32
  } -> tensor<8xf32>
  %e14 = tensor.empty() : tensor<8x8xf32>
  %t19 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a2, %t13 : tensor<8x8xf32>, tensor<8xf32>) outs(%e14 : tensor<8x8xf32>) {
  ^bb0(%b15: f32, %b16: f32, %b17: f32):
    %s18 = arith.subf %b15, %b16 : f32
    linalg.yield %s18 : f32
  } -> tensor<8x8xf32>
  %e20 = tensor.empty() : tensor<8x8xf32>
  %t24 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t19 : tensor<8x8xf32>) outs(%e20 : tensor<8x8xf32>) {
  ^bb0(%b21: f32, %b22: f32):
    %s23 = math.exp %b21 : f32
    linalg.yield %s23 : f32
  } -> tensor<8x8xf32>
  %e25 = tensor.empty() : tensor<8xf32>
  %c26 = arith.constant 0.000000000e+00 : f32
  %f27 = linalg.fill ins(%c26 : f32) outs(%e25 : tensor<8xf32>) -> tensor<8xf32>
  %t31 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t24 : tensor<8x8xf32>) outs(%f27 : tensor<8xf32>) {
  ^bb0(%b28: f32, %b29: f32):
    %s30 = arith.addf %b29, %b28 : f32
    linalg.yield %s30 : f32
  } -> tensor<8xf32>
  %e32 = tensor.empty() : tensor<8x8xf32>
  %t37 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t24, %t31 : tensor<8x8xf32>, tensor<8xf32>) outs(%e32 : tensor<8x8xf32>) {
  ^bb0(%b33: f32, %b34: f32, %b35: f32):
    %s36 = arith.divf %b33, %b34 : f32
    linalg.yield %s36 : f32
  } -> tensor<8x8xf32>
  func.return %t37, %t6 : tensor<8x8xf32>, tensor<8x8xf32>
}
