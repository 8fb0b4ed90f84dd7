func.func @dag(%a0: tensor<16x16xbf16> {hyperoffload.category = "activations"}) -> (tensor<16x16xbf16>, tensor<16x16xbf16>) {
  %e1 = tensor.empty() : tensor<16x16xbf16>
  %c2 = arith.constant 0.000000000e+00 : bf16
  %f3 = linalg.fill ins(%c2 : bf16) outs(%e1 : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %t9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a0, %a0 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%f3 : tensor<16x16xbf16>) {
  ^bb0(%b4: bf16, %b5: bf16, %b6: bf16):
    %s7 = arith.mulf %b4, %b5 : bf16
    %s8 = arith.addf %b6, %s7 : bf16
    linalg.yield %s8 : bf16
  } -> tensor<16x16xbf16>
  %t10 = arith.mulf %t9, %t9 : tensor<16x16xbf16>
  %e11 = tensor.empty() : tensor<16x16xbf16>
  %c12 = arith.constant 0.000000000e+00 : bf16
  %t19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a0, %a0 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%f13 : tensor<16x16xbf16>) {
  %f13 = linalg.fill ins(%c12 : bf16) outs(%e11 : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  ^bb0(%b14: bf16, %b15: bf16, %b16: bf16):
    %s17 = arith.mulf %b14, %b15 : bf16
    %s18 = arith.addf %b16, %s17 : bf16
    linalg.yield %s18 : bf16
  } -> tensor<16x16xbf16>
  %e20 = tensor.empty() : tensor<16x16xbf16>
  %t25 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t9, %a0 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%e20 : tensor<16x16xbf16>) {
  ^bb0(%b21: bf16, %b22: bf16, %b23: bf16):
    %s24 = arith.maximumf %b21, %b22 : bf16
    linalg.yield %s24 : bf16
  } -> tensor<16x16xbf16>
  %c26 = tensor.collapse_shape %t19 [[0, 1]] : tensor<16x16xbf16> into tensor<256xbf16>
  %x27 = tensor.expand_shape %c26 [[0, 1]] output_shape [16, 16] : tensor<256xbf16> into tensor<16x16xbf16>
  %t28 = arith.addf %t25, %t25 : tensor<16x16xbf16>
  %e29 = tensor.empty() : tensor<16x16xbf16>
  %t34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t28, %t28 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%e29 : tensor<16x16xbf16>) {
  ^bb0(%b30: bf16, %b31: bf16, %b32: bf16):
    %s33 = arith.maximumf %b30, %b31 : bf16
    linalg.yield %s33 : bf16
  } -> tensor<16x16xbf16>
  %e35 = tensor.empty() : tensor<16xbf16>
  %c36 = arith.constant -3.000000000e+38 : bf16
  %f37 = linalg.fill ins(%c36 : bf16) outs(%e35 : tensor<16xbf16>) -> tensor<16xbf16>
  %t41 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x27 : tensor<16x16xbf16>) outs(%f37 : tensor<16xbf16>) {
  ^bb0(%b38: bf16, %b39: bf16):
    %s40 = arith.maximumf %b39, %b38 : bf16
    linalg.yield %s40 : bf16
  } -> tensor<16xbf16>
  %e42 = tensor.empty() : tensor<16x16xbf16>
  %t47 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x27, %t41 : tensor<16x16xbf16>, tensor<16xbf16>) outs(%e42 : tensor<16x16xbf16>) {
  ^bb0(%b43: bf16, %b44: bf16, %b45: bf16):
    %s46 = arith.subf %b43, %b44 : bf16
    linalg.yield %s46 : bf16
  } -> tensor<16x16xbf16>
  %e48 = tensor.empty() : tensor<16x16xbf16>
  %t52 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t47 : tensor<16x16xbf16>) outs(%e48 : tensor<16x16xbf16>) {
  ^bb0(%b49: bf16, %b50: bf16):
    %s51 = math.exp %b49 : bf16
    linalg.yield %s51 : bf16
  } -> tensor<16x16xbf16>
  %e53 = tensor.empty() : tensor<16xbf16>
  %c54 = arith.constant 0.000000000e+00 : bf16
  %f55 = linalg.fill ins(%c54 : bf16) outs(%e53 : tensor<16xbf16>) -> tensor<16xbf16>
  %t59 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t52 : tensor<16x16xbf16>) outs(%f55 : tensor<16xbf16>) {
  ^bb0(%b56: bf16, %b57: bf16):
    %s58 = arith.addf %b57, %b56 : bf16
    linalg.yield %s58 : bf16
  } -> tensor<16xbf16>
  %e60 = tensor.empty() : tensor<16x16xbf16>
  %t65 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t52, %t59 : tensor<16x16xbf16>, tensor<16xbf16>) outs(%e60 : tensor<16x16xbf16>) {
  ^bb0(%b61: bf16, %b62: bf16, %b63: bf16):
    %s64 = arith.divf %b61, %b62 : bf16
    linalg.yield %s64 : bf16
  } -> tensor<16x16xbf16>
  func.return %t65, %t34 : tensor<16x16xbf16>, tensor<16x16xbf16>
}
