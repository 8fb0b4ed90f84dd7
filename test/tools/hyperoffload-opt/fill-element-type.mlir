// linalg.fill verifies as upstream MLIR verifies it: the value's type is the
// output's element type. A vector into a tensor of vectors is read as written
// (xDSL took only a float or integer value, and the upstream fallback's
// generalised form then failed a rank check reported against a linalg.generic
// the input never wrote); an f32 into an f16 tensor is an error, located, as
// upstream says. (From upstream's generalize-named-ops.mlir and
// fusion-elementwise-ops.mlir.)
// RUN: not hyperoffload-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err
// RUN: not hyperoffload-opt %s --split-input-file -p 'hyperoffload-pipeline{hbm-capacity=1MB},convert-hyperoffload-to-linalg' --print-op-generic > %t.lowered 2>/dev/null
// RUN: mlir-opt --split-input-file %t.lowered | filecheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @fill_vector
// CHECK:         linalg.fill ins(%v : vector<2x4xf32>) outs(%e : tensor<vector<2x4xf32>>) -> tensor<vector<2x4xf32>>
// UPSTREAM-LABEL: func.func @fill_vector
// UPSTREAM:         linalg.fill ins(%{{.*}} : vector<2x4xf32>) outs(%{{.*}} : tensor<vector<2x4xf32>>)
func.func @fill_vector(%v: vector<2x4xf32>) -> tensor<vector<2x4xf32>> {
  %e = tensor.empty() : tensor<vector<2x4xf32>>
  %r = linalg.fill ins(%v : vector<2x4xf32>) outs(%e : tensor<vector<2x4xf32>>) -> tensor<vector<2x4xf32>>
  return %r : tensor<vector<2x4xf32>>
}

// -----

// Its generalised form, written out: a vector operand is one element (rank 0).
// CHECK-LABEL: func.func @generic_vector
// CHECK:         linalg.generic
// UPSTREAM-LABEL: func.func @generic_vector
func.func @generic_vector(%v: vector<2x4xf32>) -> tensor<vector<2x4xf32>> {
  %e = tensor.empty() : tensor<vector<2x4xf32>>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%v : vector<2x4xf32>) outs(%e : tensor<vector<2x4xf32>>) {
  ^bb0(%in: vector<2x4xf32>, %out: vector<2x4xf32>):
    linalg.yield %in : vector<2x4xf32>
  } -> tensor<vector<2x4xf32>>
  return %r : tensor<vector<2x4xf32>>
}

// -----

// ERR-NOT: fill_vector
// ERR-NOT: generic_vector
// ERR: fill-element-type.mlir:[[# @LINE + 4]]:3: error: 'linalg.fill': expected fill value type (f32) to match output element type (f16)
func.func @fill_f16_with_f32() -> tensor<8xf16> {
  %cst = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<8xf16>
  %r = linalg.fill ins(%cst : f32) outs(%e : tensor<8xf16>) -> tensor<8xf16>
  return %r : tensor<8xf16>
}
