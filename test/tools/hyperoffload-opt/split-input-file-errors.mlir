// With --split-input-file every chunk is processed and every error reported,
// as mlir-opt does; the exit status is 1 if any chunk failed.
// RUN: not hyperoffload-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not hyperoffload-opt %s --split-input-file 2>/dev/null | filecheck %s

// ERR: split-input-file-errors.mlir:11:19: error: use of undeclared SSA value name
// ERR: split-input-file-errors.mlir:24:3: error: detach of live data
// CHECK: func.func @good

func.func @undeclared() {
  %0 = arith.addf %x, %x : f32
  func.return
}

// -----

func.func @good() {
  func.return
}

// -----

func.func @live(%x: tensor<4xf32>) -> tensor<4xf32> {
  hyperoffload.detach %x : tensor<4xf32>
  func.return %x : tensor<4xf32>
}
