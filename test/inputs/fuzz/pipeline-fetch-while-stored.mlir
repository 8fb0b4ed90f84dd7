// Found by fuzz/differential.py (seed 1, program 340, pipeline-25: a generated
// transformer forward); see test/python/planning/test_plan_as_written.py.
func.func @forward(%x: tensor<8x4xf32>, %g0: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wq0: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wk0: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wv0: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "params"}, %wo0: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %w1_0: tensor<4x16xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %w2_0: tensor<16x4xf32>, %g1: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wq1: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wk1: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wv1: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "params"}, %wo1: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %w1_1: tensor<4x16xf32> {hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "params"}, %w2_1: tensor<16x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %g2: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wq2: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wk2: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wv2: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %wo2: tensor<4x4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "params"}, %w1_2: tensor<4x16xf32>, %w2_2: tensor<16x4xf32>) -> (tensor<8x4xf32>) {
  %e1 = tensor.empty() : tensor<8x4xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%b2: f32, %b3: f32):
    %s4 = arith.mulf %b2, %b2 : f32
    linalg.yield %s4 : f32
  } -> tensor<8x4xf32>
  %e6 = tensor.empty() : tensor<8xf32>
  %c7 = arith.constant 0.000000000e+00 : f32
  %f8 = linalg.fill ins(%c7 : f32) outs(%e6 : tensor<8xf32>) -> tensor<8xf32>
  %t12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t5 : tensor<8x4xf32>) outs(%f8 : tensor<8xf32>) {
  ^bb0(%b9: f32, %b10: f32):
    %s11 = arith.addf %b10, %b9 : f32
    linalg.yield %s11 : f32
  } -> tensor<8xf32>
  %e13 = tensor.empty() : tensor<8x4xf32>
  %t25 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %t12, %g0 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e13 : tensor<8x4xf32>) {
  ^bb0(%b14: f32, %b15: f32, %b16: f32, %b17: f32):
    %s18 = arith.constant 1.000000000e-05 : f32
    %s19 = arith.constant 2.500000000e-01 : f32
    %s20 = arith.mulf %b15, %s19 : f32
    %s21 = arith.addf %s20, %s18 : f32
    %s22 = math.rsqrt %s21 : f32
    %s23 = arith.mulf %b14, %s22 : f32
    %s24 = arith.mulf %s23, %b16 : f32
    linalg.yield %s24 : f32
  } -> tensor<8x4xf32>
  %e26 = tensor.empty() : tensor<8x4xf32>
  %c27 = arith.constant 0.000000000e+00 : f32
  %f28 = linalg.fill ins(%c27 : f32) outs(%e26 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t25, %wq0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f28 : tensor<8x4xf32>) {
  ^bb0(%b29: f32, %b30: f32, %b31: f32):
    %s32 = arith.mulf %b29, %b30 : f32
    %s33 = arith.addf %b31, %s32 : f32
    linalg.yield %s33 : f32
  } -> tensor<8x4xf32>
  %e35 = tensor.empty() : tensor<8x4xf32>
  %c36 = arith.constant 0.000000000e+00 : f32
  %f37 = linalg.fill ins(%c36 : f32) outs(%e35 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t25, %wk0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f37 : tensor<8x4xf32>) {
  ^bb0(%b38: f32, %b39: f32, %b40: f32):
    %s41 = arith.mulf %b38, %b39 : f32
    %s42 = arith.addf %b40, %s41 : f32
    linalg.yield %s42 : f32
  } -> tensor<8x4xf32>
  %e44 = tensor.empty() : tensor<8x4xf32>
  %c45 = arith.constant 0.000000000e+00 : f32
  %f46 = linalg.fill ins(%c45 : f32) outs(%e44 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t25, %wv0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f46 : tensor<8x4xf32>) {
  ^bb0(%b47: f32, %b48: f32, %b49: f32):
    %s50 = arith.mulf %b47, %b48 : f32
    %s51 = arith.addf %b49, %s50 : f32
    linalg.yield %s51 : f32
  } -> tensor<8x4xf32>
  %e53 = tensor.empty() : tensor<8x8xf32>
  %c54 = arith.constant 0.000000000e+00 : f32
  %f55 = linalg.fill ins(%c54 : f32) outs(%e53 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t61 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t34, %t43 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f55 : tensor<8x8xf32>) {
  ^bb0(%b56: f32, %b57: f32, %b58: f32):
    %s59 = arith.mulf %b56, %b57 : f32
    %s60 = arith.addf %b58, %s59 : f32
    linalg.yield %s60 : f32
  } -> tensor<8x8xf32>
  %e62 = tensor.empty() : tensor<8x8xf32>
  %t67 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t61 : tensor<8x8xf32>) outs(%e62 : tensor<8x8xf32>) {
  ^bb0(%b63: f32, %b64: f32):
    %s66 = arith.constant 5.000000000e-01 : f32
    %s65 = arith.mulf %b63, %s66 : f32
    linalg.yield %s65 : f32
  } -> tensor<8x8xf32>
  %e68 = tensor.empty() : tensor<8xf32>
  %c69 = arith.constant -3.000000000e+38 : f32
  %f70 = linalg.fill ins(%c69 : f32) outs(%e68 : tensor<8xf32>) -> tensor<8xf32>
  %t74 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t67 : tensor<8x8xf32>) outs(%f70 : tensor<8xf32>) {
  ^bb0(%b71: f32, %b72: f32):
    %s73 = arith.maximumf %b72, %b71 : f32
    linalg.yield %s73 : f32
  } -> tensor<8xf32>
  %e75 = tensor.empty() : tensor<8x8xf32>
  %t80 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t67, %t74 : tensor<8x8xf32>, tensor<8xf32>) outs(%e75 : tensor<8x8xf32>) {
  ^bb0(%b76: f32, %b77: f32, %b78: f32):
    %s79 = arith.subf %b76, %b77 : f32
    linalg.yield %s79 : f32
  } -> tensor<8x8xf32>
  %e81 = tensor.empty() : tensor<8x8xf32>
  %t85 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t80 : tensor<8x8xf32>) outs(%e81 : tensor<8x8xf32>) {
  ^bb0(%b82: f32, %b83: f32):
    %s84 = math.exp %b82 : f32
    linalg.yield %s84 : f32
  } -> tensor<8x8xf32>
  %e86 = tensor.empty() : tensor<8xf32>
  %c87 = arith.constant 0.000000000e+00 : f32
  %f88 = linalg.fill ins(%c87 : f32) outs(%e86 : tensor<8xf32>) -> tensor<8xf32>
  %t92 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t85 : tensor<8x8xf32>) outs(%f88 : tensor<8xf32>) {
  ^bb0(%b89: f32, %b90: f32):
    %s91 = arith.addf %b90, %b89 : f32
    linalg.yield %s91 : f32
  } -> tensor<8xf32>
  %e93 = tensor.empty() : tensor<8x8xf32>
  %t98 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t85, %t92 : tensor<8x8xf32>, tensor<8xf32>) outs(%e93 : tensor<8x8xf32>) {
  ^bb0(%b94: f32, %b95: f32, %b96: f32):
    %s97 = arith.divf %b94, %b95 : f32
    linalg.yield %s97 : f32
  } -> tensor<8x8xf32>
  %e99 = tensor.empty() : tensor<8x4xf32>
  %c100 = arith.constant 0.000000000e+00 : f32
  %f101 = linalg.fill ins(%c100 : f32) outs(%e99 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t107 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t98, %t52 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%f101 : tensor<8x4xf32>) {
  ^bb0(%b102: f32, %b103: f32, %b104: f32):
    %s105 = arith.mulf %b102, %b103 : f32
    %s106 = arith.addf %b104, %s105 : f32
    linalg.yield %s106 : f32
  } -> tensor<8x4xf32>
  %e108 = tensor.empty() : tensor<8x4xf32>
  %c109 = arith.constant 0.000000000e+00 : f32
  %f110 = linalg.fill ins(%c109 : f32) outs(%e108 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t116 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t107, %wo0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f110 : tensor<8x4xf32>) {
  ^bb0(%b111: f32, %b112: f32, %b113: f32):
    %s114 = arith.mulf %b111, %b112 : f32
    %s115 = arith.addf %b113, %s114 : f32
    linalg.yield %s115 : f32
  } -> tensor<8x4xf32>
  %e117 = tensor.empty() : tensor<8x4xf32>
  %t122 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %t116 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e117 : tensor<8x4xf32>) {
  ^bb0(%b118: f32, %b119: f32, %b120: f32):
    %s121 = arith.addf %b118, %b119 : f32
    linalg.yield %s121 : f32
  } -> tensor<8x4xf32>
  %e123 = tensor.empty() : tensor<8x4xf32>
  %t127 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t122 : tensor<8x4xf32>) outs(%e123 : tensor<8x4xf32>) {
  ^bb0(%b124: f32, %b125: f32):
    %s126 = arith.mulf %b124, %b124 : f32
    linalg.yield %s126 : f32
  } -> tensor<8x4xf32>
  %e128 = tensor.empty() : tensor<8xf32>
  %c129 = arith.constant 0.000000000e+00 : f32
  %f130 = linalg.fill ins(%c129 : f32) outs(%e128 : tensor<8xf32>) -> tensor<8xf32>
  %t134 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t127 : tensor<8x4xf32>) outs(%f130 : tensor<8xf32>) {
  ^bb0(%b131: f32, %b132: f32):
    %s133 = arith.addf %b132, %b131 : f32
    linalg.yield %s133 : f32
  } -> tensor<8xf32>
  %e135 = tensor.empty() : tensor<8x4xf32>
  %t147 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t122, %t134, %g0 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e135 : tensor<8x4xf32>) {
  ^bb0(%b136: f32, %b137: f32, %b138: f32, %b139: f32):
    %s140 = arith.constant 1.000000000e-05 : f32
    %s141 = arith.constant 2.500000000e-01 : f32
    %s142 = arith.mulf %b137, %s141 : f32
    %s143 = arith.addf %s142, %s140 : f32
    %s144 = math.rsqrt %s143 : f32
    %s145 = arith.mulf %b136, %s144 : f32
    %s146 = arith.mulf %s145, %b138 : f32
    linalg.yield %s146 : f32
  } -> tensor<8x4xf32>
  %e148 = tensor.empty() : tensor<8x16xf32>
  %c149 = arith.constant 0.000000000e+00 : f32
  %f150 = linalg.fill ins(%c149 : f32) outs(%e148 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %t156 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t147, %w1_0 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%f150 : tensor<8x16xf32>) {
  ^bb0(%b151: f32, %b152: f32, %b153: f32):
    %s154 = arith.mulf %b151, %b152 : f32
    %s155 = arith.addf %b153, %s154 : f32
    linalg.yield %s155 : f32
  } -> tensor<8x16xf32>
  %e157 = tensor.empty() : tensor<8x16xf32>
  %t165 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t156 : tensor<8x16xf32>) outs(%e157 : tensor<8x16xf32>) {
  ^bb0(%b158: f32, %b159: f32):
    %s161 = arith.constant 1.000000000e+00 : f32
    %s162 = arith.negf %b158 : f32
    %s163 = math.exp %s162 : f32
    %s164 = arith.addf %s161, %s163 : f32
    %s160 = arith.divf %b158, %s164 : f32
    linalg.yield %s160 : f32
  } -> tensor<8x16xf32>
  %e166 = tensor.empty() : tensor<8x4xf32>
  %c167 = arith.constant 0.000000000e+00 : f32
  %f168 = linalg.fill ins(%c167 : f32) outs(%e166 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t174 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t165, %w2_0 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f168 : tensor<8x4xf32>) {
  ^bb0(%b169: f32, %b170: f32, %b171: f32):
    %s172 = arith.mulf %b169, %b170 : f32
    %s173 = arith.addf %b171, %s172 : f32
    linalg.yield %s173 : f32
  } -> tensor<8x4xf32>
  %e175 = tensor.empty() : tensor<8x4xf32>
  %t180 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t122, %t174 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e175 : tensor<8x4xf32>) {
  ^bb0(%b176: f32, %b177: f32, %b178: f32):
    %s179 = arith.addf %b176, %b177 : f32
    linalg.yield %s179 : f32
  } -> tensor<8x4xf32>
  %e181 = tensor.empty() : tensor<8x4xf32>
  %t185 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t180 : tensor<8x4xf32>) outs(%e181 : tensor<8x4xf32>) {
  ^bb0(%b182: f32, %b183: f32):
    %s184 = arith.mulf %b182, %b182 : f32
    linalg.yield %s184 : f32
  } -> tensor<8x4xf32>
  %e186 = tensor.empty() : tensor<8xf32>
  %c187 = arith.constant 0.000000000e+00 : f32
  %f188 = linalg.fill ins(%c187 : f32) outs(%e186 : tensor<8xf32>) -> tensor<8xf32>
  %t192 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t185 : tensor<8x4xf32>) outs(%f188 : tensor<8xf32>) {
  ^bb0(%b189: f32, %b190: f32):
    %s191 = arith.addf %b190, %b189 : f32
    linalg.yield %s191 : f32
  } -> tensor<8xf32>
  %e193 = tensor.empty() : tensor<8x4xf32>
  %t205 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t180, %t192, %g1 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e193 : tensor<8x4xf32>) {
  ^bb0(%b194: f32, %b195: f32, %b196: f32, %b197: f32):
    %s198 = arith.constant 1.000000000e-05 : f32
    %s199 = arith.constant 2.500000000e-01 : f32
    %s200 = arith.mulf %b195, %s199 : f32
    %s201 = arith.addf %s200, %s198 : f32
    %s202 = math.rsqrt %s201 : f32
    %s203 = arith.mulf %b194, %s202 : f32
    %s204 = arith.mulf %s203, %b196 : f32
    linalg.yield %s204 : f32
  } -> tensor<8x4xf32>
  %e206 = tensor.empty() : tensor<8x4xf32>
  %c207 = arith.constant 0.000000000e+00 : f32
  %f208 = linalg.fill ins(%c207 : f32) outs(%e206 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t214 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t205, %wq1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f208 : tensor<8x4xf32>) {
  ^bb0(%b209: f32, %b210: f32, %b211: f32):
    %s212 = arith.mulf %b209, %b210 : f32
    %s213 = arith.addf %b211, %s212 : f32
    linalg.yield %s213 : f32
  } -> tensor<8x4xf32>
  %e215 = tensor.empty() : tensor<8x4xf32>
  %c216 = arith.constant 0.000000000e+00 : f32
  %f217 = linalg.fill ins(%c216 : f32) outs(%e215 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t223 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t205, %wk1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f217 : tensor<8x4xf32>) {
  ^bb0(%b218: f32, %b219: f32, %b220: f32):
    %s221 = arith.mulf %b218, %b219 : f32
    %s222 = arith.addf %b220, %s221 : f32
    linalg.yield %s222 : f32
  } -> tensor<8x4xf32>
  %e224 = tensor.empty() : tensor<8x4xf32>
  %c225 = arith.constant 0.000000000e+00 : f32
  %f226 = linalg.fill ins(%c225 : f32) outs(%e224 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t232 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t205, %wv1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f226 : tensor<8x4xf32>) {
  ^bb0(%b227: f32, %b228: f32, %b229: f32):
    %s230 = arith.mulf %b227, %b228 : f32
    %s231 = arith.addf %b229, %s230 : f32
    linalg.yield %s231 : f32
  } -> tensor<8x4xf32>
  %e233 = tensor.empty() : tensor<8x8xf32>
  %c234 = arith.constant 0.000000000e+00 : f32
  %f235 = linalg.fill ins(%c234 : f32) outs(%e233 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t241 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t214, %t223 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f235 : tensor<8x8xf32>) {
  ^bb0(%b236: f32, %b237: f32, %b238: f32):
    %s239 = arith.mulf %b236, %b237 : f32
    %s240 = arith.addf %b238, %s239 : f32
    linalg.yield %s240 : f32
  } -> tensor<8x8xf32>
  %e242 = tensor.empty() : tensor<8x8xf32>
  %t247 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t241 : tensor<8x8xf32>) outs(%e242 : tensor<8x8xf32>) {
  ^bb0(%b243: f32, %b244: f32):
    %s246 = arith.constant 5.000000000e-01 : f32
    %s245 = arith.mulf %b243, %s246 : f32
    linalg.yield %s245 : f32
  } -> tensor<8x8xf32>
  %e248 = tensor.empty() : tensor<8xf32>
  %c249 = arith.constant -3.000000000e+38 : f32
  %f250 = linalg.fill ins(%c249 : f32) outs(%e248 : tensor<8xf32>) -> tensor<8xf32>
  %t254 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t247 : tensor<8x8xf32>) outs(%f250 : tensor<8xf32>) {
  ^bb0(%b251: f32, %b252: f32):
    %s253 = arith.maximumf %b252, %b251 : f32
    linalg.yield %s253 : f32
  } -> tensor<8xf32>
  %e255 = tensor.empty() : tensor<8x8xf32>
  %t260 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t247, %t254 : tensor<8x8xf32>, tensor<8xf32>) outs(%e255 : tensor<8x8xf32>) {
  ^bb0(%b256: f32, %b257: f32, %b258: f32):
    %s259 = arith.subf %b256, %b257 : f32
    linalg.yield %s259 : f32
  } -> tensor<8x8xf32>
  %e261 = tensor.empty() : tensor<8x8xf32>
  %t265 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t260 : tensor<8x8xf32>) outs(%e261 : tensor<8x8xf32>) {
  ^bb0(%b262: f32, %b263: f32):
    %s264 = math.exp %b262 : f32
    linalg.yield %s264 : f32
  } -> tensor<8x8xf32>
  %e266 = tensor.empty() : tensor<8xf32>
  %c267 = arith.constant 0.000000000e+00 : f32
  %f268 = linalg.fill ins(%c267 : f32) outs(%e266 : tensor<8xf32>) -> tensor<8xf32>
  %t272 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t265 : tensor<8x8xf32>) outs(%f268 : tensor<8xf32>) {
  ^bb0(%b269: f32, %b270: f32):
    %s271 = arith.addf %b270, %b269 : f32
    linalg.yield %s271 : f32
  } -> tensor<8xf32>
  %e273 = tensor.empty() : tensor<8x8xf32>
  %t278 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t265, %t272 : tensor<8x8xf32>, tensor<8xf32>) outs(%e273 : tensor<8x8xf32>) {
  ^bb0(%b274: f32, %b275: f32, %b276: f32):
    %s277 = arith.divf %b274, %b275 : f32
    linalg.yield %s277 : f32
  } -> tensor<8x8xf32>
  %e279 = tensor.empty() : tensor<8x4xf32>
  %c280 = arith.constant 0.000000000e+00 : f32
  %f281 = linalg.fill ins(%c280 : f32) outs(%e279 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t287 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t278, %t232 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%f281 : tensor<8x4xf32>) {
  ^bb0(%b282: f32, %b283: f32, %b284: f32):
    %s285 = arith.mulf %b282, %b283 : f32
    %s286 = arith.addf %b284, %s285 : f32
    linalg.yield %s286 : f32
  } -> tensor<8x4xf32>
  %e288 = tensor.empty() : tensor<8x4xf32>
  %c289 = arith.constant 0.000000000e+00 : f32
  %f290 = linalg.fill ins(%c289 : f32) outs(%e288 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t296 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t287, %wo1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f290 : tensor<8x4xf32>) {
  ^bb0(%b291: f32, %b292: f32, %b293: f32):
    %s294 = arith.mulf %b291, %b292 : f32
    %s295 = arith.addf %b293, %s294 : f32
    linalg.yield %s295 : f32
  } -> tensor<8x4xf32>
  %e297 = tensor.empty() : tensor<8x4xf32>
  %t302 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t180, %t296 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e297 : tensor<8x4xf32>) {
  ^bb0(%b298: f32, %b299: f32, %b300: f32):
    %s301 = arith.addf %b298, %b299 : f32
    linalg.yield %s301 : f32
  } -> tensor<8x4xf32>
  %e303 = tensor.empty() : tensor<8x4xf32>
  %t307 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t302 : tensor<8x4xf32>) outs(%e303 : tensor<8x4xf32>) {
  ^bb0(%b304: f32, %b305: f32):
    %s306 = arith.mulf %b304, %b304 : f32
    linalg.yield %s306 : f32
  } -> tensor<8x4xf32>
  %e308 = tensor.empty() : tensor<8xf32>
  %c309 = arith.constant 0.000000000e+00 : f32
  %f310 = linalg.fill ins(%c309 : f32) outs(%e308 : tensor<8xf32>) -> tensor<8xf32>
  %t314 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t307 : tensor<8x4xf32>) outs(%f310 : tensor<8xf32>) {
  ^bb0(%b311: f32, %b312: f32):
    %s313 = arith.addf %b312, %b311 : f32
    linalg.yield %s313 : f32
  } -> tensor<8xf32>
  %e315 = tensor.empty() : tensor<8x4xf32>
  %t327 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t302, %t314, %g1 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e315 : tensor<8x4xf32>) {
  ^bb0(%b316: f32, %b317: f32, %b318: f32, %b319: f32):
    %s320 = arith.constant 1.000000000e-05 : f32
    %s321 = arith.constant 2.500000000e-01 : f32
    %s322 = arith.mulf %b317, %s321 : f32
    %s323 = arith.addf %s322, %s320 : f32
    %s324 = math.rsqrt %s323 : f32
    %s325 = arith.mulf %b316, %s324 : f32
    %s326 = arith.mulf %s325, %b318 : f32
    linalg.yield %s326 : f32
  } -> tensor<8x4xf32>
  %e328 = tensor.empty() : tensor<8x16xf32>
  %c329 = arith.constant 0.000000000e+00 : f32
  %f330 = linalg.fill ins(%c329 : f32) outs(%e328 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %t336 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t327, %w1_1 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%f330 : tensor<8x16xf32>) {
  ^bb0(%b331: f32, %b332: f32, %b333: f32):
    %s334 = arith.mulf %b331, %b332 : f32
    %s335 = arith.addf %b333, %s334 : f32
    linalg.yield %s335 : f32
  } -> tensor<8x16xf32>
  %e337 = tensor.empty() : tensor<8x16xf32>
  %t345 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t336 : tensor<8x16xf32>) outs(%e337 : tensor<8x16xf32>) {
  ^bb0(%b338: f32, %b339: f32):
    %s341 = arith.constant 1.000000000e+00 : f32
    %s342 = arith.negf %b338 : f32
    %s343 = math.exp %s342 : f32
    %s344 = arith.addf %s341, %s343 : f32
    %s340 = arith.divf %b338, %s344 : f32
    linalg.yield %s340 : f32
  } -> tensor<8x16xf32>
  %e346 = tensor.empty() : tensor<8x4xf32>
  %c347 = arith.constant 0.000000000e+00 : f32
  %f348 = linalg.fill ins(%c347 : f32) outs(%e346 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t354 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t345, %w2_1 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f348 : tensor<8x4xf32>) {
  ^bb0(%b349: f32, %b350: f32, %b351: f32):
    %s352 = arith.mulf %b349, %b350 : f32
    %s353 = arith.addf %b351, %s352 : f32
    linalg.yield %s353 : f32
  } -> tensor<8x4xf32>
  %e355 = tensor.empty() : tensor<8x4xf32>
  %t360 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t302, %t354 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e355 : tensor<8x4xf32>) {
  ^bb0(%b356: f32, %b357: f32, %b358: f32):
    %s359 = arith.addf %b356, %b357 : f32
    linalg.yield %s359 : f32
  } -> tensor<8x4xf32>
  %e361 = tensor.empty() : tensor<8x4xf32>
  %t365 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t360 : tensor<8x4xf32>) outs(%e361 : tensor<8x4xf32>) {
  ^bb0(%b362: f32, %b363: f32):
    %s364 = arith.mulf %b362, %b362 : f32
    linalg.yield %s364 : f32
  } -> tensor<8x4xf32>
  %e366 = tensor.empty() : tensor<8xf32>
  %c367 = arith.constant 0.000000000e+00 : f32
  %f368 = linalg.fill ins(%c367 : f32) outs(%e366 : tensor<8xf32>) -> tensor<8xf32>
  %t372 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t365 : tensor<8x4xf32>) outs(%f368 : tensor<8xf32>) {
  ^bb0(%b369: f32, %b370: f32):
    %s371 = arith.addf %b370, %b369 : f32
    linalg.yield %s371 : f32
  } -> tensor<8xf32>
  %e373 = tensor.empty() : tensor<8x4xf32>
  %t385 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t360, %t372, %g2 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e373 : tensor<8x4xf32>) {
  ^bb0(%b374: f32, %b375: f32, %b376: f32, %b377: f32):
    %s378 = arith.constant 1.000000000e-05 : f32
    %s379 = arith.constant 2.500000000e-01 : f32
    %s380 = arith.mulf %b375, %s379 : f32
    %s381 = arith.addf %s380, %s378 : f32
    %s382 = math.rsqrt %s381 : f32
    %s383 = arith.mulf %b374, %s382 : f32
    %s384 = arith.mulf %s383, %b376 : f32
    linalg.yield %s384 : f32
  } -> tensor<8x4xf32>
  %e386 = tensor.empty() : tensor<8x4xf32>
  %c387 = arith.constant 0.000000000e+00 : f32
  %f388 = linalg.fill ins(%c387 : f32) outs(%e386 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t394 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t385, %wq2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f388 : tensor<8x4xf32>) {
  ^bb0(%b389: f32, %b390: f32, %b391: f32):
    %s392 = arith.mulf %b389, %b390 : f32
    %s393 = arith.addf %b391, %s392 : f32
    linalg.yield %s393 : f32
  } -> tensor<8x4xf32>
  %e395 = tensor.empty() : tensor<8x4xf32>
  %c396 = arith.constant 0.000000000e+00 : f32
  %f397 = linalg.fill ins(%c396 : f32) outs(%e395 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t403 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t385, %wk2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f397 : tensor<8x4xf32>) {
  ^bb0(%b398: f32, %b399: f32, %b400: f32):
    %s401 = arith.mulf %b398, %b399 : f32
    %s402 = arith.addf %b400, %s401 : f32
    linalg.yield %s402 : f32
  } -> tensor<8x4xf32>
  %e404 = tensor.empty() : tensor<8x4xf32>
  %c405 = arith.constant 0.000000000e+00 : f32
  %f406 = linalg.fill ins(%c405 : f32) outs(%e404 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t412 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t385, %wv2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f406 : tensor<8x4xf32>) {
  ^bb0(%b407: f32, %b408: f32, %b409: f32):
    %s410 = arith.mulf %b407, %b408 : f32
    %s411 = arith.addf %b409, %s410 : f32
    linalg.yield %s411 : f32
  } -> tensor<8x4xf32>
  %e413 = tensor.empty() : tensor<8x8xf32>
  %c414 = arith.constant 0.000000000e+00 : f32
  %f415 = linalg.fill ins(%c414 : f32) outs(%e413 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t421 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t394, %t403 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%f415 : tensor<8x8xf32>) {
  ^bb0(%b416: f32, %b417: f32, %b418: f32):
    %s419 = arith.mulf %b416, %b417 : f32
    %s420 = arith.addf %b418, %s419 : f32
    linalg.yield %s420 : f32
  } -> tensor<8x8xf32>
  %e422 = tensor.empty() : tensor<8x8xf32>
  %t427 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t421 : tensor<8x8xf32>) outs(%e422 : tensor<8x8xf32>) {
  ^bb0(%b423: f32, %b424: f32):
    %s426 = arith.constant 5.000000000e-01 : f32
    %s425 = arith.mulf %b423, %s426 : f32
    linalg.yield %s425 : f32
  } -> tensor<8x8xf32>
  %e428 = tensor.empty() : tensor<8xf32>
  %c429 = arith.constant -3.000000000e+38 : f32
  %f430 = linalg.fill ins(%c429 : f32) outs(%e428 : tensor<8xf32>) -> tensor<8xf32>
  %t434 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t427 : tensor<8x8xf32>) outs(%f430 : tensor<8xf32>) {
  ^bb0(%b431: f32, %b432: f32):
    %s433 = arith.maximumf %b432, %b431 : f32
    linalg.yield %s433 : f32
  } -> tensor<8xf32>
  %e435 = tensor.empty() : tensor<8x8xf32>
  %t440 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t427, %t434 : tensor<8x8xf32>, tensor<8xf32>) outs(%e435 : tensor<8x8xf32>) {
  ^bb0(%b436: f32, %b437: f32, %b438: f32):
    %s439 = arith.subf %b436, %b437 : f32
    linalg.yield %s439 : f32
  } -> tensor<8x8xf32>
  %e441 = tensor.empty() : tensor<8x8xf32>
  %t445 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t440 : tensor<8x8xf32>) outs(%e441 : tensor<8x8xf32>) {
  ^bb0(%b442: f32, %b443: f32):
    %s444 = math.exp %b442 : f32
    linalg.yield %s444 : f32
  } -> tensor<8x8xf32>
  %e446 = tensor.empty() : tensor<8xf32>
  %c447 = arith.constant 0.000000000e+00 : f32
  %f448 = linalg.fill ins(%c447 : f32) outs(%e446 : tensor<8xf32>) -> tensor<8xf32>
  %t452 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t445 : tensor<8x8xf32>) outs(%f448 : tensor<8xf32>) {
  ^bb0(%b449: f32, %b450: f32):
    %s451 = arith.addf %b450, %b449 : f32
    linalg.yield %s451 : f32
  } -> tensor<8xf32>
  %e453 = tensor.empty() : tensor<8x8xf32>
  %t458 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t445, %t452 : tensor<8x8xf32>, tensor<8xf32>) outs(%e453 : tensor<8x8xf32>) {
  ^bb0(%b454: f32, %b455: f32, %b456: f32):
    %s457 = arith.divf %b454, %b455 : f32
    linalg.yield %s457 : f32
  } -> tensor<8x8xf32>
  %e459 = tensor.empty() : tensor<8x4xf32>
  %c460 = arith.constant 0.000000000e+00 : f32
  %f461 = linalg.fill ins(%c460 : f32) outs(%e459 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t467 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t458, %t412 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%f461 : tensor<8x4xf32>) {
  ^bb0(%b462: f32, %b463: f32, %b464: f32):
    %s465 = arith.mulf %b462, %b463 : f32
    %s466 = arith.addf %b464, %s465 : f32
    linalg.yield %s466 : f32
  } -> tensor<8x4xf32>
  %e468 = tensor.empty() : tensor<8x4xf32>
  %c469 = arith.constant 0.000000000e+00 : f32
  %f470 = linalg.fill ins(%c469 : f32) outs(%e468 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t476 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t467, %wo2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f470 : tensor<8x4xf32>) {
  ^bb0(%b471: f32, %b472: f32, %b473: f32):
    %s474 = arith.mulf %b471, %b472 : f32
    %s475 = arith.addf %b473, %s474 : f32
    linalg.yield %s475 : f32
  } -> tensor<8x4xf32>
  %e477 = tensor.empty() : tensor<8x4xf32>
  %t482 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t360, %t476 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e477 : tensor<8x4xf32>) {
  ^bb0(%b478: f32, %b479: f32, %b480: f32):
    %s481 = arith.addf %b478, %b479 : f32
    linalg.yield %s481 : f32
  } -> tensor<8x4xf32>
  %e483 = tensor.empty() : tensor<8x4xf32>
  %t487 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t482 : tensor<8x4xf32>) outs(%e483 : tensor<8x4xf32>) {
  ^bb0(%b484: f32, %b485: f32):
    %s486 = arith.mulf %b484, %b484 : f32
    linalg.yield %s486 : f32
  } -> tensor<8x4xf32>
  %e488 = tensor.empty() : tensor<8xf32>
  %c489 = arith.constant 0.000000000e+00 : f32
  %f490 = linalg.fill ins(%c489 : f32) outs(%e488 : tensor<8xf32>) -> tensor<8xf32>
  %t494 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t487 : tensor<8x4xf32>) outs(%f490 : tensor<8xf32>) {
  ^bb0(%b491: f32, %b492: f32):
    %s493 = arith.addf %b492, %b491 : f32
    linalg.yield %s493 : f32
  } -> tensor<8xf32>
  %e495 = tensor.empty() : tensor<8x4xf32>
  %t507 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t482, %t494, %g2 : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e495 : tensor<8x4xf32>) {
  ^bb0(%b496: f32, %b497: f32, %b498: f32, %b499: f32):
    %s500 = arith.constant 1.000000000e-05 : f32
    %s501 = arith.constant 2.500000000e-01 : f32
    %s502 = arith.mulf %b497, %s501 : f32
    %s503 = arith.addf %s502, %s500 : f32
    %s504 = math.rsqrt %s503 : f32
    %s505 = arith.mulf %b496, %s504 : f32
    %s506 = arith.mulf %s505, %b498 : f32
    linalg.yield %s506 : f32
  } -> tensor<8x4xf32>
  %e508 = tensor.empty() : tensor<8x16xf32>
  %c509 = arith.constant 0.000000000e+00 : f32
  %f510 = linalg.fill ins(%c509 : f32) outs(%e508 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %t516 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t507, %w1_2 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%f510 : tensor<8x16xf32>) {
  ^bb0(%b511: f32, %b512: f32, %b513: f32):
    %s514 = arith.mulf %b511, %b512 : f32
    %s515 = arith.addf %b513, %s514 : f32
    linalg.yield %s515 : f32
  } -> tensor<8x16xf32>
  %e517 = tensor.empty() : tensor<8x16xf32>
  %t525 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t516 : tensor<8x16xf32>) outs(%e517 : tensor<8x16xf32>) {
  ^bb0(%b518: f32, %b519: f32):
    %s521 = arith.constant 1.000000000e+00 : f32
    %s522 = arith.negf %b518 : f32
    %s523 = math.exp %s522 : f32
    %s524 = arith.addf %s521, %s523 : f32
    %s520 = arith.divf %b518, %s524 : f32
    linalg.yield %s520 : f32
  } -> tensor<8x16xf32>
  %e526 = tensor.empty() : tensor<8x4xf32>
  %c527 = arith.constant 0.000000000e+00 : f32
  %f528 = linalg.fill ins(%c527 : f32) outs(%e526 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t534 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t525, %w2_2 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f528 : tensor<8x4xf32>) {
  ^bb0(%b529: f32, %b530: f32, %b531: f32):
    %s532 = arith.mulf %b529, %b530 : f32
    %s533 = arith.addf %b531, %s532 : f32
    linalg.yield %s533 : f32
  } -> tensor<8x4xf32>
  %e535 = tensor.empty() : tensor<8x4xf32>
  %t540 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t482, %t534 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e535 : tensor<8x4xf32>) {
  ^bb0(%b536: f32, %b537: f32, %b538: f32):
    %s539 = arith.addf %b536, %b537 : f32
    linalg.yield %s539 : f32
  } -> tensor<8x4xf32>
  func.return %t540 : tensor<8x4xf32>
}
