// A two-layer MLP step that keeps its weights in the remote pool and parks
// the hidden activation there between its producer and its consumer.
//
//   hyperoffload-opt examples/offload_mlp.mlir
func.func @mlp(%x: tensor<8x16xf32>,
               %w1: !hyperoffload.remote<tensor<16x32xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>},
               %w2: !hyperoffload.remote<tensor<32x16xf32>, host>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %w1d = hyperoffload.prefetch %w1 : !hyperoffload.remote<tensor<16x32xf32>> -> tensor<16x32xf32>
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1d : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  hyperoffload.detach %w1d : tensor<16x32xf32>
  %hs = hyperoffload.store %h : tensor<8x32xf32> -> !hyperoffload.remote<tensor<8x32xf32>>
  hyperoffload.detach %h : tensor<8x32xf32>
  %w2d = hyperoffload.prefetch %w2 : !hyperoffload.remote<tensor<32x16xf32>, host> -> tensor<32x16xf32>
  %hd = hyperoffload.prefetch %hs : !hyperoffload.remote<tensor<8x32xf32>> -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%hd, %w2d : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  hyperoffload.detach %hd : tensor<8x32xf32>
  hyperoffload.detach %w2d : tensor<32x16xf32>
  func.return %y : tensor<8x16xf32>
}
