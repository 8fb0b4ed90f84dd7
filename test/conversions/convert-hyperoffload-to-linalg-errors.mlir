// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --verify-diagnostics | filecheck %s

// The copies move whole buffers of a static size.
// CHECK: convert-hyperoffload-to-linalg-errors.mlir:6:3: error: cannot lower 'hyperoffload.prefetch' of tensor<?x4xf32>: only statically shaped tensors are supported
func.func @dynamic(%w: !hyperoffload.remote<tensor<?x4xf32>>) -> tensor<?x4xf32> {
  %d = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<?x4xf32>> -> tensor<?x4xf32>
  func.return %d : tensor<?x4xf32>
}
