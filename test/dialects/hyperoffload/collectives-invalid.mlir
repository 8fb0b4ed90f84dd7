// What the collective ops' verifier rejects, each error located.
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: collectives-invalid.mlir:[[# @LINE + 2]]:3: error: 'hyperoffload.reduce_scatter': a shard of tensor<16x8xf32> over 4 devices is tensor<4x8xf32>, got tensor<5x8xf32>
func.func @wrong_shard(%g: tensor<16x8xf32>) -> tensor<5x8xf32> {
  %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<5x8xf32>
  func.return %gs : tensor<5x8xf32>
}

// -----

// CHECK: collectives-invalid.mlir:[[# @LINE + 2]]:3: error: 'hyperoffload.all_gather': rank 4 is not in a group of 4 (0 to 3)
func.func @rank_outside(%ws: tensor<4x8xf32>) -> tensor<16x8xf32> {
  %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 4 : i64} : tensor<4x8xf32> -> tensor<16x8xf32>
  func.return %w : tensor<16x8xf32>
}

// -----

// CHECK: collectives-invalid.mlir:[[# @LINE + 2]]:3: error: 'hyperoffload.all_gather': tensor<15x8xf32> has 15 rows, not a multiple of the group (4)
func.func @rows_not_whole(%ws: tensor<4x8xf32>) -> tensor<15x8xf32> {
  %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 0 : i64} : tensor<4x8xf32> -> tensor<15x8xf32>
  func.return %w : tensor<15x8xf32>
}

// -----

// CHECK: collectives-invalid.mlir:[[# @LINE + 2]]:3: error: 'hyperoffload.reduce_scatter': the element type is kept: tensor<16x8xf32> -> tensor<4x8xbf16>
func.func @retyped(%g: tensor<16x8xf32>) -> tensor<4x8xbf16> {
  %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 0 : i64} : tensor<16x8xf32> -> tensor<4x8xbf16>
  func.return %gs : tensor<4x8xbf16>
}
