// The torch-mlir training step, planned for 632 KB and lowered: upstream
// mlir-opt (no custom dialect loaded) verifies it and bufferizes it.
// RUN: hyperoffload-opt %S/../../examples/tiny_llama_train.mlir -p 'hyperoffload-pipeline{hbm-capacity=632KB},convert-hyperoffload-to-linalg' --print-op-generic \
// RUN:   | mlir-opt | filecheck %s
// RUN: hyperoffload-opt %S/../../examples/tiny_llama_train.mlir -p 'hyperoffload-pipeline{hbm-capacity=632KB},convert-hyperoffload-to-linalg' --print-op-generic \
// RUN:   | mlir-opt --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF

// Parameters live in the remote pool (memory space 1); transfers are DMAs.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    memref<128x64xf32, 1>
// CHECK:         memref.dma_start
// CHECK:         memref.dma_wait
// CHECK:         bufferization.to_tensor
// CHECK-NOT:     hyperoffload

// BUF-LABEL: func.func @train_step
// BUF:         memref.dma_start
// BUF-NOT:     bufferization.to_tensor
// BUF:         return
