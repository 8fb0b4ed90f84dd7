// A real planned program (examples/offload_mlp.mlir), lowered and handed to
// upstream bufferization.
// RUN: hyperoffload-opt %S/../../examples/offload_mlp.mlir -p 'hyperoffload-pipeline,convert-hyperoffload-to-linalg' --print-op-generic \
// RUN:   | mlir-opt --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s
//
// For execution (synchronous copies, frees left to upstream), down to LLVM
// with the pipeline of docs/lowering.md:
// RUN: hyperoffload-opt %S/../../examples/offload_mlp.mlir -p 'hyperoffload-pipeline,convert-hyperoffload-to-linalg{dma=false dealloc=false}' --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:     --buffer-results-to-out-params=modify-public-functions=1 --buffer-deallocation-pipeline --convert-linalg-to-loops \
// RUN:     --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | filecheck %s --check-prefix=LLVM
//
// With the plan's frees kept (no buffer-deallocation-pipeline then):
// RUN: hyperoffload-opt %S/../../examples/offload_mlp.mlir -p 'hyperoffload-pipeline,convert-hyperoffload-to-linalg{dma=false}' --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:     --buffer-results-to-out-params=modify-public-functions=1 --convert-linalg-to-loops \
// RUN:     --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | filecheck %s --check-prefix=LLVM

// The weights arrive in their tiers' memory spaces (remote 1, host 2) and are
// copied into device buffers that the matmuls read once the copies are
// awaited; the hidden activation goes to the remote tier and comes back,
// while the second weight is fetched beside it.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%arg0: memref<8x16xf32>, %arg1: memref<16x32xf32, 1>, %arg2: memref<32x16xf32, 2>) -> memref<8x16xf32>
// CHECK:         %[[W1:[a-z_0-9]+]] = memref.alloc() : memref<16x32xf32>
// CHECK:         memref.dma_start %arg1[%{{.*}}], %[[W1]][%{{.*}}], %c512, %[[T1:[a-z_0-9]+]][
// CHECK:         memref.dma_wait %[[T1]][
// CHECK-NEXT:    linalg.matmul ins(%arg0, %[[W1]] : memref<8x16xf32>, memref<16x32xf32>) outs(%[[H:[a-z_0-9]+]] : memref<8x32xf32>)
// CHECK-NEXT:    memref.dealloc %[[W1]] : memref<16x32xf32>
// CHECK-NEXT:    %[[HR:[a-z_0-9]+]] = memref.alloc() : memref<8x32xf32, 1>
// CHECK:         memref.dma_start %[[H]][%{{.*}}], %[[HR]][%{{.*}}], %c256
// CHECK-NEXT:    memref.dma_wait
// CHECK-NEXT:    %[[W2:[a-z_0-9]+]] = memref.alloc() : memref<32x16xf32>
// CHECK:         memref.dma_start %arg2[%{{.*}}], %[[W2]][
// CHECK:         %[[HD:[a-z_0-9]+]] = memref.alloc() : memref<8x32xf32>
// CHECK:         memref.dma_start %[[HR]][%{{.*}}], %[[HD]][%{{.*}}], %c256
// CHECK:         memref.dma_wait
// CHECK:         memref.dma_wait
// CHECK-NEXT:    linalg.matmul ins(%[[HD]], %[[W2]] : memref<8x32xf32>, memref<32x16xf32>)
// CHECK-NEXT:    memref.dealloc %[[HD]] : memref<8x32xf32>
// CHECK-NEXT:    memref.dealloc %[[W2]] : memref<32x16xf32>
// CHECK-NEXT:    return
// CHECK-NOT:     tensor<

// LLVM-NOT:  memref
// LLVM:      llvm.func @mlp(%arg0: !llvm.ptr, {{.*}}, %arg7: !llvm.ptr<1>, {{.*}}, %arg14: !llvm.ptr<2>,
// LLVM:      "llvm.intr.memcpy"({{.*}}) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr<1>, i64) -> ()
// LLVM:      "llvm.intr.memcpy"({{.*}}) <{isVolatile = false}> : (!llvm.ptr<1>, !llvm.ptr, i64) -> ()
// LLVM:      "llvm.intr.memcpy"({{.*}}) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr<2>, i64) -> ()
// LLVM:      "llvm.intr.memcpy"({{.*}}) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr<1>, i64) -> ()
// LLVM:      llvm.call @free
// LLVM-NOT:  memref
