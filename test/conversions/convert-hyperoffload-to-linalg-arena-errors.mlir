// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics -p 'convert-hyperoffload-to-linalg{arena=true}' | filecheck %s
// RUN: not hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{arena=true}' 2>&1 | filecheck %s --check-prefix=FIRST

// The layout comes from hyperoffload-assign-offsets.
// CHECK: convert-hyperoffload-to-linalg-arena-errors.mlir:7:1: error: @unplanned has no memory layout ('hyperoffload.arena_bytes'): run hyperoffload-assign-offsets first
// FIRST: convert-hyperoffload-to-linalg-arena-errors.mlir:7:1: error: @unplanned has no memory layout ('hyperoffload.arena_bytes'): run hyperoffload-assign-offsets first
func.func @unplanned(%w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %d = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// -----

// CHECK: convert-hyperoffload-to-linalg-arena-errors.mlir:17:3: error: the buffer of result #0 (64 B at offset 64) does not fit in the arena of 64 B
func.func @outside(%w: !hyperoffload.remote<tensor<16xf32>>) -> tensor<16xf32>
    attributes {hyperoffload.arena_bytes = 64 : i64} {
  %d = hyperoffload.prefetch %w {hyperoffload.offsets = array<i64: 64>} : !hyperoffload.remote<tensor<16xf32>> -> tensor<16xf32>
  func.return %d : tensor<16xf32>
}

// -----

// CHECK: convert-hyperoffload-to-linalg-arena-errors.mlir:26:3: error: 'hyperoffload.offsets' must be an array<i64> with one entry per result (1)
func.func @miscounted(%x: tensor<16xf32>) -> tensor<16xf32>
    attributes {hyperoffload.arena_bytes = 64 : i64} {
  %d = "tensor.empty"() {hyperoffload.offsets = array<i64: 0, 0>} : () -> tensor<16xf32>
  %y = tensor.insert_slice %x into %d[0] [16] [1] : tensor<16xf32> into tensor<16xf32>
  func.return %y : tensor<16xf32>
}
