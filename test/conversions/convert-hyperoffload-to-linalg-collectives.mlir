// The collectives of a sharded step lowered to their single-process
// semantics: the reduce-scatter is the rank's slice of its operand (the mean
// of replicas that saw this device's data), the all-gather places the shard
// at the rank's rows of zeros (the other devices' shards are not this
// program's to know). Upstream reads and bufferizes the result.
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic \
// RUN:   | mlir-opt --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @zero_step
// CHECK-NEXT:    %gs = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty() : tensor<16x8xbf16>
// CHECK-NEXT:    %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : bf16) outs(%[[EMPTY]] : tensor<16x8xbf16>) -> tensor<16x8xbf16>
// CHECK-NEXT:    %[[W:.*]] = tensor.insert_slice %ws into %[[ZEROS]][4, 0] [4, 8] [1, 1] : tensor<4x8xbf16> into tensor<16x8xbf16>
// CHECK-NEXT:    func.return %gs, %[[W]]
// CHECK-NOT:   hyperoffload.

// BUF-LABEL: func.func @zero_step
// BUF:         memref.subview %arg0[4, 0] [4, 8] [1, 1]
// BUF:         linalg.fill
// BUF:         memref.subview {{.*}}[4, 0] [4, 8] [1, 1]
// BUF:         memref.copy
func.func @zero_step(%g: tensor<16x8xf32>, %ws: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<16x8xbf16>) {
  %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
  %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xbf16> -> tensor<16x8xbf16>
  func.return %gs, %w : tensor<4x8xf32>, tensor<16x8xbf16>
}
