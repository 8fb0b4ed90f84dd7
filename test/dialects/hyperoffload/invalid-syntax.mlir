// RUN: hyperoffload-opt %s --split-input-file --parsing-diagnostics | filecheck %s

func.func @unknown_tier(%x: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<nvme>}) {
  func.return
}
// CHECK: invalid-syntax.mlir:3:83
// CHECK: unknown memory tier 'nvme', expected one of hbm, remote, host, ssd

// -----

func.func @remote_in_hbm(%w: !hyperoffload.remote<tensor<4xf32>, hbm>) {
  func.return
}
// CHECK: invalid-syntax.mlir:11:1
// CHECK: a remote copy cannot live in 'hbm'; device-resident data is a plain tensor

// -----

func.func @remote_of_non_tensor(%w: !hyperoffload.remote<memref<4xf32>>) {
  func.return
}
// CHECK: invalid-syntax.mlir:19:58
// CHECK: expected a tensor type in !hyperoffload.remote, got memref<4xf32>

// -----

// Ops whose operand types xDSL checks while parsing reject a remote copy there.
func.func @arith_reads_remote(%w: !hyperoffload.remote<tensor<4xf32>>) {
  %y = arith.addf %w, %w : !hyperoffload.remote<tensor<4xf32>>
  func.return
}
// CHECK: invalid-syntax.mlir:29:3
// CHECK: invalid operation: Unexpected attribute !hyperoffload.remote<tensor<4xf32>>
