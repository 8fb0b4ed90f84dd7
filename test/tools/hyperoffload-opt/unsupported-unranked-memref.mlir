// An unranked tensor or a memref has no size the model can count: the
// planner and the simulator give a located diagnostic that says so, never
// a peak of 0 B. (A view of a ranked tensor as unranked is sized as its
// source: upstream-only-ops.mlir.)
// RUN: not hyperoffload-opt %s --split-input-file -p 'hyperoffload-pipeline{hbm-capacity=1MB}' 2>&1 | filecheck %s
// RUN: not hyperoffload-sim %s 2>&1 | filecheck %s --check-prefix=SIM

// CHECK: unsupported-unranked-memref.mlir:[[# @LINE + 3]]:1: error: cannot size tensor<*xf32> of 'func.func': unranked tensors are not supported
// SIM: unsupported-unranked-memref.mlir:[[# @LINE + 2]]:1: error: cannot size tensor<*xf32> of 'func.func': unranked tensors are not supported
// SIM-NOT: Traceback
func.func @unranked(%a: tensor<*xf32>, %b: tensor<4xf32>) -> (tensor<*xf32>, tensor<4xf32>) {
  %c = arith.addf %b, %b : tensor<4xf32>
  func.return %a, %c : tensor<*xf32>, tensor<4xf32>
}

// -----

// CHECK: unsupported-unranked-memref.mlir:[[# @LINE + 2]]:1: error: cannot size memref<16x16xf32> of 'func.func': memref values are not supported (the planner and the simulator count tensors: give the program before bufferization)
// CHECK-NOT: Traceback
func.func @memref_only(%a: memref<16x16xf32>, %b: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  func.return
}
