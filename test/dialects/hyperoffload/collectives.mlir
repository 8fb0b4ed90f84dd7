// The collective ops of a data-parallel group (`hyperoffload-gen --shard N`):
// the custom and generic forms round-trip, upstream reads the generic form
// with the dialect loaded from its IRDL export (what the verifier rejects:
// collectives-invalid.mlir).
// RUN: hyperoffload-opt %s --split-input-file | hyperoffload-opt --split-input-file | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file --print-op-generic | hyperoffload-opt --split-input-file | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file --print-op-generic | mlir-opt --split-input-file --irdl-file=%irdl | filecheck %s --check-prefix=UPSTREAM
// hyperoffload-strip keeps them: they compute.
// RUN: hyperoffload-opt %s --split-input-file -p hyperoffload-strip | filecheck %s

// CHECK-LABEL: func.func @zero_step
// CHECK-NEXT:    %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xbf16> -> tensor<16x8xbf16>
// UPSTREAM-LABEL: func.func @zero_step
// UPSTREAM:       "hyperoffload.reduce_scatter"(%arg0) {group = 4 : i64, rank = 1 : i64} : (tensor<16x8xf32>) -> tensor<4x8xf32>
// UPSTREAM:       "hyperoffload.all_gather"(%arg1) {group = 4 : i64, rank = 1 : i64} : (tensor<4x8xbf16>) -> tensor<16x8xbf16>
func.func @zero_step(%g: tensor<16x8xf32>, %ws: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<16x8xbf16>) {
  %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
  %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xbf16> -> tensor<16x8xbf16>
  func.return %gs, %w : tensor<4x8xf32>, tensor<16x8xbf16>
}

// -----

// A group of one is the identity.
// CHECK-LABEL: func.func @alone
// CHECK-NEXT:    hyperoffload.reduce_scatter %g {group = 1 : i64, rank = 0 : i64} : tensor<3xf32> -> tensor<3xf32>
func.func @alone(%g: tensor<3xf32>) -> tensor<3xf32> {
  %gs = hyperoffload.reduce_scatter %g {group = 1 : i64, rank = 0 : i64} : tensor<3xf32> -> tensor<3xf32>
  func.return %gs : tensor<3xf32>
}
