// tensor.reshape with a dynamic dimension verifies, as upstream MLIR verifies
// it (xDSL compared the element counts with `?` as -1); static shapes whose
// counts differ are still an error, located. (From upstream's
// Tensor/bufferize.mlir.)
// RUN: not hyperoffload-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err
// RUN: not hyperoffload-opt %s --split-input-file --print-op-generic > %t.generic 2>/dev/null
// RUN: mlir-opt --split-input-file %t.generic | filecheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @dynamic
// CHECK:         tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x10xf32>, tensor<3xi64>) -> tensor<2x2x5xf32>
func.func @dynamic(%t1: tensor<?x10xf32>) -> tensor<2x2x5xf32> {
  %two = arith.constant 2 : i64
  %five = arith.constant 5 : i64
  %shape = tensor.from_elements %two, %two, %five : tensor<3xi64>
  %reshaped = tensor.reshape %t1(%shape) : (tensor<?x10xf32>, tensor<3xi64>) -> tensor<2x2x5xf32>
  return %reshaped : tensor<2x2x5xf32>
}

// -----

// ERR: tensor-reshape-dynamic.mlir:[[# @LINE + 2]]:3: error: 'tensor.reshape': source and result tensor should have the same number of elements
func.func @static_mismatch(%t1: tensor<4x10xf32>, %shape: tensor<3xi64>) -> tensor<2x2x5xf32> {
  %reshaped = tensor.reshape %t1(%shape) : (tensor<4x10xf32>, tensor<3xi64>) -> tensor<2x2x5xf32>
  return %reshaped : tensor<2x2x5xf32>
}

// UPSTREAM-LABEL: func.func @dynamic
// UPSTREAM:         tensor.reshape
