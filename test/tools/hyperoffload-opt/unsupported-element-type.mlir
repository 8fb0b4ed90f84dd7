// An element type the cost model cannot size gets a located diagnostic.
// RUN: not hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=1MB}' 2>&1 | filecheck %s
// RUN: not hyperoffload-sim %s 2>&1 | filecheck %s

// CHECK: unsupported-element-type.mlir:7:1: error: cannot size tensor<4x4xcomplex<f32>> of 'func.func': the element type complex<f32> has no size the model knows (not supported)
// CHECK-NOT: Traceback
func.func @f(%a: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
  %e = tensor.empty() : tensor<4x4xcomplex<f32>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xcomplex<f32>>) outs(%e : tensor<4x4xcomplex<f32>>) {
  ^bb0(%x: complex<f32>, %o: complex<f32>):
    linalg.yield %x : complex<f32>
  } -> tensor<4x4xcomplex<f32>>
  func.return %r : tensor<4x4xcomplex<f32>>
}
