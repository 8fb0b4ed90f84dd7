// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{dma=false dealloc=false}' | filecheck %s --check-prefix=EXEC
// Upstream reads the result with no custom dialect loaded, and bufferizes it
// (one-shot bufferization keeps the scf.if, on buffers).
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s --check-prefix=GONE
// GONE-NOT: hyperoffload

// The two-expert toy (test/dialects/hyperoffload/expert-branch.mlir): the
// prefetch, its wait and its free stay inside the cold expert's branch, so
// the hot path neither copies nor waits.
// CHECK-LABEL: func.func @two_experts
// CHECK-SAME:    %w_cold: memref<4x4xf32, 1 : i64>
// CHECK:         %y = scf.if %routed -> (tensor<2x4xf32>) {
// CHECK-NEXT:      %hot = linalg.matmul ins(%x, %w_hot
// CHECK-NEXT:      scf.yield %hot
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %wd_buf = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:      %c0 = arith.constant 0 : index
// CHECK-NEXT:      %c16 = arith.constant 16 : index
// CHECK-NEXT:      %tag = memref.alloca() : memref<1xi32>
// CHECK-NEXT:      "memref.dma_start"(%w_cold, %c0, %c0, %wd_buf, %c0, %c0, %c16, %tag, %c0)
// CHECK-NEXT:      "memref.dma_wait"(%tag, %c0, %c16)
// CHECK-NEXT:      %wd = bufferization.to_tensor %wd_buf restrict : memref<4x4xf32> to tensor<4x4xf32>
// CHECK-NEXT:      %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:      memref.dealloc %wd_buf : memref<4x4xf32>
// CHECK-NEXT:      scf.yield %cold
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = arith.addf %x, %y

// EXEC-LABEL: func.func @two_experts
// EXEC:         } else {
// EXEC-NEXT:      %wd_buf = memref.alloc() : memref<4x4xf32>
// EXEC-NEXT:      "memref.copy"(%w_cold, %wd_buf) : (memref<4x4xf32, 1 : i64>, memref<4x4xf32>) -> ()
// EXEC-NEXT:      %wd = bufferization.to_tensor %wd_buf restrict
// EXEC-NEXT:      %cold = linalg.matmul ins(%x, %wd
// EXEC-NEXT:      scf.yield %cold

// UPSTREAM-LABEL: func.func @two_experts
// UPSTREAM-SAME:    %arg3: memref<4x4xf32, 1>
// UPSTREAM:         scf.if %arg1
// UPSTREAM:         } else {
// UPSTREAM-NEXT:      memref.alloc() : memref<4x4xf32>
// UPSTREAM:           memref.dma_start %arg3

// BUF-LABEL: func.func @two_experts
// BUF-SAME:    %[[W:[a-z0-9]+]]: memref<4x4xf32, 1>) -> memref<2x4xf32>
// BUF:         scf.if %{{.*}} -> (memref<2x4xf32>) {
// BUF-NEXT:      linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x4xf32>, memref<4x4xf32>)
// BUF:         } else {
// BUF-NEXT:      %[[BUF:[a-z0-9_]+]] = memref.alloc() : memref<4x4xf32>
// BUF:           memref.dma_start %[[W]]{{.*}}, %[[BUF]]
// BUF:           memref.dma_wait
// BUF-NEXT:      linalg.matmul ins(%{{.*}}, %[[BUF]] : memref<2x4xf32>, memref<4x4xf32>)
// BUF-NEXT:      memref.dealloc %[[BUF]]
func.func @two_experts(%x: tensor<2x4xf32>, %routed: i1, %w_hot: tensor<4x4xf32>,
                       %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %hot : tensor<2x4xf32>
  } else {
    %wd = hyperoffload.prefetch %w_cold : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
    %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    hyperoffload.detach %wd : tensor<4x4xf32>
    scf.yield %cold : tensor<2x4xf32>
  }
  %r = arith.addf %x, %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// The speculative variant: the copy starts above the scf.if; it is awaited
// before the scf.if (on both paths: the first op that reads it holds the
// reader) and freed after it, where the detach was. `speculative` is gone.
// CHECK-LABEL: func.func @speculative_cold_expert
// CHECK:         %wd_buf = memref.alloc() : memref<4x4xf32>
// CHECK:         "memref.dma_start"(%w_cold, %c0, %c0, %wd_buf, %c0, %c0, %c16, %tag, %c0)
// CHECK-NEXT:    "memref.dma_wait"(%tag, %c0, %c16)
// CHECK-NEXT:    %wd = bufferization.to_tensor %wd_buf restrict
// CHECK-NEXT:    %y = scf.if %routed -> (tensor<2x4xf32>) {
// CHECK:         } else {
// CHECK-NEXT:      %cold = linalg.matmul ins(%x, %wd
// CHECK-NEXT:      scf.yield %cold
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %wd_buf : memref<4x4xf32>
// CHECK-NEXT:    %r = arith.addf %x, %y

// BUF-LABEL: func.func @speculative_cold_expert
// BUF:         %[[SBUF:[a-z0-9_]+]] = memref.alloc() : memref<4x4xf32>
// BUF:         memref.dma_wait
// BUF-NEXT:    scf.if
// BUF:         } else {
// BUF-NEXT:      linalg.matmul ins(%{{.*}}, %[[SBUF]] : memref<2x4xf32>, memref<4x4xf32>)
// BUF:         }
// BUF-NEXT:    memref.dealloc %[[SBUF]]
func.func @speculative_cold_expert(%x: tensor<2x4xf32>, %routed: i1, %w_hot: tensor<4x4xf32>,
                                   %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %wd = hyperoffload.prefetch %w_cold {speculative} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %hot : tensor<2x4xf32>
  } else {
    %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %cold : tensor<2x4xf32>
  }
  hyperoffload.detach %wd : tensor<4x4xf32>
  %r = arith.addf %x, %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
