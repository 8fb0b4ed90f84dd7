// Ops that upstream MLIR registers and xDSL does not (tensor.rank,
// tensor.generate, shape.shape_of) are read through upstream MLIR and kept as
// they are, in generic form; planning and lowering leave them alone, and
// mlir-opt reads the lowered program. (upstream-only-ops-unregistered.mlir:
// an op no one registers stays an error.)
// RUN: hyperoffload-opt %s --split-input-file | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file -p 'hyperoffload-pipeline{hbm-capacity=1MB},convert-hyperoffload-to-linalg' --print-op-generic \
// RUN:   | mlir-opt --split-input-file | filecheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @rank
// CHECK:         %{{.*}} = "tensor.rank"(%{{.*}}) : (tensor<*xf32>) -> index
// UPSTREAM-LABEL: func.func @rank
// UPSTREAM:         tensor.rank %{{.*}} : tensor<*xf32>
func.func @rank(%t: tensor<4x8xf32>) -> index {
  %u = tensor.cast %t : tensor<4x8xf32> to tensor<*xf32>
  %r = tensor.rank %u : tensor<*xf32>
  return %r : index
}

// -----

// CHECK-LABEL: func.func @generate
// CHECK:         %{{.*}} = "tensor.generate"() ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[I]], %[[J]] : index
// CHECK-NEXT:      tensor.yield %[[S]] : index
// CHECK-NEXT:    }) : () -> tensor<4x8xindex>
// UPSTREAM-LABEL: func.func @generate
// UPSTREAM:         tensor.generate {
// UPSTREAM:           tensor.yield
func.func @generate() -> tensor<4x8xindex> {
  %g = tensor.generate {
  ^bb0(%i: index, %j: index):
    %s = arith.addi %i, %j : index
    tensor.yield %s : index
  } : tensor<4x8xindex>
  return %g : tensor<4x8xindex>
}

// -----

// CHECK-LABEL: func.func @shape
// CHECK:         %{{.*}} = "shape.shape_of"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2xindex>
// UPSTREAM-LABEL: func.func @shape
// UPSTREAM:         shape.shape_of %{{.*}} : tensor<2x3xf32> -> tensor<2xindex>
func.func @shape(%t: tensor<2x3xf32>) -> tensor<2xindex> {
  %s = shape.shape_of %t : tensor<2x3xf32> -> tensor<2xindex>
  return %s : tensor<2xindex>
}
