// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{dma=false dealloc=false}' | filecheck %s --check-prefix=EXEC
// Upstream MLIR reads the result with no custom dialect loaded...
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// ...and bufferizes it: compute reads the prefetch buffers, the stores copy
// the buffers compute wrote.
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF
// Nothing of the hyperoffload dialect is left.
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s --check-prefix=GONE
// GONE-NOT: hyperoffload

// The copy starts where the prefetch was; the wait and the tensor view of the
// buffer come right before the first consumer; the detach frees the buffer.
// The tier becomes the memory space of the argument (remote: 1).
// CHECK-LABEL: func.func @overlap
// CHECK-SAME:    (%x: tensor<4x8xf32>, %w: memref<4x8xf32, 1 : i64>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %wd_buf = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c32 = arith.constant 32 : index
// CHECK-NEXT:    %tag = memref.alloca() : memref<1xi32>
// CHECK-NEXT:    "memref.dma_start"(%w, %c0, %c0, %wd_buf, %c0, %c0, %c32, %tag, %c0)
// CHECK-NEXT:    %a = arith.addf %x, %x : tensor<4x8xf32>
// CHECK-NEXT:    "memref.dma_wait"(%tag, %c0, %c32)
// CHECK-NEXT:    %wd = bufferization.to_tensor %wd_buf restrict : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-NEXT:    %b = arith.mulf %a, %wd : tensor<4x8xf32>
// CHECK-NEXT:    memref.dealloc %wd_buf : memref<4x8xf32>
// CHECK-NEXT:    func.return %b : tensor<4x8xf32>

// EXEC-LABEL: func.func @overlap
// EXEC-NEXT:    %wd_buf = memref.alloc() : memref<4x8xf32>
// EXEC-NEXT:    "memref.copy"(%w, %wd_buf) : (memref<4x8xf32, 1 : i64>, memref<4x8xf32>) -> ()
// EXEC-NEXT:    %a = arith.addf %x, %x
// EXEC-NEXT:    %wd = bufferization.to_tensor %wd_buf restrict
// EXEC-NEXT:    %b = arith.mulf %a, %wd
// EXEC-NEXT:    func.return %b

// UPSTREAM-LABEL: func.func @overlap
// UPSTREAM-SAME:    (%arg0: tensor<4x8xf32>, %arg1: memref<4x8xf32, 1>) -> tensor<4x8xf32>
// UPSTREAM:         memref.dma_start %arg1[%c0, %c0], %[[DEV:.*]][%c0, %c0], %c32, %[[TAG:.*]][%c0]
// UPSTREAM-NEXT:    arith.addf
// UPSTREAM-NEXT:    memref.dma_wait %[[TAG]][%c0], %c32 : memref<1xi32>
// UPSTREAM-NEXT:    bufferization.to_tensor %[[DEV]] restrict

// BUF-LABEL: func.func @overlap
// BUF-SAME:    (%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32, 1>) -> memref<4x8xf32>
// BUF:         %[[DEV:.*]] = memref.alloc() : memref<4x8xf32>
// BUF:         memref.dma_start %arg1[%c0, %c0], %[[DEV]][%c0, %c0]
// BUF:         memref.dma_wait
// BUF-NEXT:    linalg.generic {{.*}} ins(%arg0, %[[DEV]] : memref<4x8xf32>, memref<4x8xf32>)
// BUF:         memref.dealloc %[[DEV]] : memref<4x8xf32>
// BUF-NEXT:    return
func.func @overlap(%x: tensor<4x8xf32>, %w: !hyperoffload.remote<tensor<4x8xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<4x8xf32> {
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %a = arith.addf %x, %x : tensor<4x8xf32>
  %b = arith.mulf %a, %wd : tensor<4x8xf32>
  hyperoffload.detach %wd : tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}

// A store copies the device buffer of the tensor into a new buffer in the
// tier, which the function returns; the copy is awaited before the next use
// of the stored tensor. The detach of a computed tensor leaves its buffer to
// bufferization. With dealloc=false the tier buffer is allocated in the
// default space and cast (finalize-memref-to-llvm frees only space 0).
// CHECK-LABEL: func.func @adam
// CHECK-SAME:    %m: memref<256xf32, 1 : i64>) -> (tensor<256xf32>, memref<256xf32, 1 : i64>) {
// CHECK:         %m_1 = bufferization.to_tensor %m_buf restrict
// CHECK-NEXT:    %m2 = arith.addf %m_1, %g : tensor<256xf32>
// CHECK-NEXT:    %m2_remote_src = bufferization.to_buffer %m2 read_only : tensor<256xf32> to memref<256xf32>
// CHECK-NEXT:    %m2_remote = memref.alloc() : memref<256xf32, 1 : i64>
// CHECK-NEXT:    %c0_1 = arith.constant 0 : index
// CHECK-NEXT:    %c256_1 = arith.constant 256 : index
// CHECK-NEXT:    %tag_1 = memref.alloca() : memref<1xi32>
// CHECK-NEXT:    "memref.dma_start"(%m2_remote_src, %c0_1, %m2_remote, %c0_1, %c256_1, %tag_1, %c0_1)
// CHECK-NEXT:    memref.dealloc %m_buf : memref<256xf32>
// CHECK-NEXT:    "memref.dma_wait"(%tag_1, %c0_1, %c256_1)
// CHECK-NEXT:    %p2 = arith.subf %p, %m2 : tensor<256xf32>
// CHECK-NEXT:    func.return %p2, %m2_remote : tensor<256xf32>, memref<256xf32, 1 : i64>

// EXEC-LABEL: func.func @adam
// EXEC:         %m2_remote_src = bufferization.to_buffer %m2 read_only
// EXEC-NEXT:    %m2_remote_buf = memref.alloc() : memref<256xf32>
// EXEC-NEXT:    %m2_remote = "memref.memory_space_cast"(%m2_remote_buf) : (memref<256xf32>) -> memref<256xf32, 1 : i64>
// EXEC-NEXT:    "memref.copy"(%m2_remote_src, %m2_remote)
// EXEC-NEXT:    %p2 = arith.subf %p, %m2
// EXEC-NEXT:    func.return %p2, %m2_remote

// UPSTREAM-LABEL: func.func @adam
// UPSTREAM-SAME:    %arg2: memref<256xf32, 1>) -> (tensor<256xf32>, memref<256xf32, 1>)
// UPSTREAM:         %[[REMOTE:.*]] = memref.alloc() : memref<256xf32, 1>
// UPSTREAM:         return %{{.*}}, %[[REMOTE]] : tensor<256xf32>, memref<256xf32, 1>

// BUF-LABEL: func.func @adam
// BUF:         linalg.generic {{.*}} outs(%[[M2:.*]] : memref<256xf32>)
// BUF:         %[[REMOTE:.*]] = memref.alloc() : memref<256xf32, 1>
// BUF:         memref.dma_start %[[M2]][%{{.*}}], %[[REMOTE]][%{{.*}}]
// BUF:         return %arg0, %[[REMOTE]] : memref<256xf32>, memref<256xf32, 1>
func.func @adam(%p: tensor<256xf32>, %g: tensor<256xf32>,
                %m: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "optimizer"})
    -> (tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %m_1 = hyperoffload.prefetch %m : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %m2 = arith.addf %m_1, %g : tensor<256xf32>
  %m2_remote = hyperoffload.store %m2 : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>>
  hyperoffload.detach %m_1 : tensor<256xf32>
  %p2 = arith.subf %p, %m2 : tensor<256xf32>
  hyperoffload.detach %m2 : tensor<256xf32>
  func.return %p2, %m2_remote : tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>>
}

// A use nested in a loop is a consumer: the wait comes before the loop, the
// free after it. The host tier is memory space 2.
// CHECK-LABEL: func.func @loop
// CHECK-SAME:    %w: memref<256xf32, 2 : i64>) -> tensor<256xf32> {
// CHECK:         "memref.dma_start"(%w,
// CHECK-NEXT:    "memref.dma_wait"
// CHECK-NEXT:    %wd = bufferization.to_tensor %wd_buf restrict
// CHECK-NEXT:    %r = scf.for
// CHECK-NEXT:      %s = arith.mulf %acc, %wd
// CHECK-NEXT:      scf.yield %s
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %wd_buf : memref<256xf32>
// CHECK-NEXT:    func.return %r

// BUF-LABEL: func.func @loop
// BUF-SAME:    %arg2: memref<256xf32, 2>) -> memref<256xf32>
// BUF:         scf.for
// BUF-NEXT:      linalg.generic {{.*}} ins(%{{.*}}, %[[DEV:.*]] : memref<256xf32>, memref<256xf32>)
// BUF:         memref.dealloc %[[DEV]]
func.func @loop(%x: tensor<256xf32>, %n: index, %w: !hyperoffload.remote<tensor<256xf32>, host>) -> tensor<256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>, host> -> tensor<256xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<256xf32>) {
    %s = arith.mulf %acc, %wd : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  hyperoffload.detach %wd : tensor<256xf32>
  func.return %r : tensor<256xf32>
}

// Remote copies passed to calls: signatures and calls are retyped (ssd is
// memory space 3); the store is awaited before the call that reads the copy.
// CHECK-LABEL: func.func @callee
// CHECK-SAME:    (%r: memref<4xf32, 3 : i64>) -> tensor<4xf32>
// CHECK-LABEL: func.func @caller
// CHECK:         %h = memref.alloc() : memref<4xf32, 3 : i64>
// CHECK:         "memref.dma_start"(%h_src, %c0, %h, %c0, %c4, %tag, %c0)
// CHECK-NEXT:    "memref.dma_wait"(%tag, %c0, %c4)
// CHECK-NEXT:    %y = func.call @callee(%h) : (memref<4xf32, 3 : i64>) -> tensor<4xf32>

// UPSTREAM-LABEL: func.func @caller
// UPSTREAM:         call @callee(%{{.*}}) : (memref<4xf32, 3>) -> tensor<4xf32>
func.func @callee(%r: !hyperoffload.remote<tensor<4xf32>, ssd>) -> tensor<4xf32> {
  %d = hyperoffload.prefetch %r : !hyperoffload.remote<tensor<4xf32>, ssd> -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>, ssd>
  hyperoffload.detach %x : tensor<4xf32>
  %y = func.call @callee(%h) : (!hyperoffload.remote<tensor<4xf32>, ssd>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// A view of the prefetched tensor may share its buffer, which bufferization
// may keep past the detach: the buffer is not freed there. (A read through the
// view after the detach is a use after it, which the verifier rejects.) A tier
// request on a tensor argument is dropped (the tensor is device-resident).
// CHECK-LABEL: func.func @view
// CHECK-SAME:    (%v: tensor<32xf32>, %w: memref<4x8xf32, 1 : i64>) -> tensor<32xf32> {
// CHECK:         %c = tensor.collapse_shape %d
// CHECK-NEXT:    %s = arith.addf %c, %v
// CHECK-NEXT:    func.return %s
func.func @view(%v: tensor<32xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}, %w: !hyperoffload.remote<tensor<4x8xf32>>) -> tensor<32xf32> {
  %d = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %c = tensor.collapse_shape %d [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %s = arith.addf %c, %v : tensor<32xf32>
  hyperoffload.detach %d : tensor<4x8xf32>
  func.return %s : tensor<32xf32>
}
