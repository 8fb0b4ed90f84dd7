// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{arena=true}' | filecheck %s
// Upstream MLIR reads the result with no custom dialect loaded...
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{arena=true}' --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// ...and bufferizes it: compute writes into views of the arena, not into
// buffers of its own.
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{arena=true}' --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF
// With the layout of hyperoffload-assign-offsets, the example runs through upstream.
// RUN: hyperoffload-opt %S/../../examples/offload_mlp.mlir -p 'hyperoffload-assign-offsets,convert-hyperoffload-to-linalg{arena=true}' --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=MLP
// Nothing of the hyperoffload dialect is left, attributes included.
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{arena=true}' | filecheck %s --check-prefix=GONE
// GONE-NOT: hyperoffload

// Arena (896 B): %x [0, 128) (an argument: unused), %wd [128, 384), %m
// [384, 512), then %a [128, 256) and %s [256, 384) once %wd is freed, %d
// [512, 768), the constant [768, 896) (unused: it stays a global).
// CHECK-LABEL: func.func @layers
// CHECK-SAME:    (%x: tensor<4x8xf32>, %w: memref<8x8xf32, 1 : i64>) -> tensor<8x8xf32> {
// CHECK-NEXT:    %arena = memref.alloc() {alignment = 64 : i64} : memref<896xi8>
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %one = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// The prefetch copies into its view; the detach frees nothing.
// CHECK-NEXT:    %c128 = arith.constant 128 : index
// CHECK-NEXT:    %wd_buf = memref.view %arena[%c128][] : memref<896xi8> to memref<8x8xf32>
// CHECK:         "memref.dma_start"(%w, %{{.*}}, %{{.*}}, %wd_buf,
// CHECK:         %wd = bufferization.to_tensor %wd_buf restrict : memref<8x8xf32> to tensor<8x8xf32>
// The fill that every matmul of a model shares is cloned onto the view.
// CHECK-NEXT:    %c384 = arith.constant 384 : index
// CHECK-NEXT:    %m_buf = memref.view %arena[%c384][] : memref<896xi8> to memref<4x8xf32>
// CHECK-NEXT:    %[[M_INIT:.*]] = bufferization.to_tensor %m_buf restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-NEXT:    %f = linalg.fill ins(%zero : f32) outs(%[[M_INIT]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %m = linalg.matmul ins(%x, %wd : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
// An empty init is replaced by the view (%a reuses the range of %wd).
// CHECK-NEXT:    %c128_1 = arith.constant 128 : index
// CHECK-NEXT:    %a_buf = memref.view %arena[%c128_1][] : memref<896xi8> to memref<4x8xf32>
// CHECK-NEXT:    %[[A_INIT:.*]] = bufferization.to_tensor %a_buf restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-NEXT:    %a = linalg.generic {{.*}} ins(%m, %one : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[A_INIT]] : tensor<4x8xf32>) {
// CHECK:         } -> tensor<4x8xf32>
// arith on tensors writes into its view, not into the buffer of %a.
// CHECK-NEXT:    %c256 = arith.constant 256 : index
// CHECK-NEXT:    %s_buf = memref.view %arena[%c256][] : memref<896xi8> to memref<4x8xf32>
// CHECK-NEXT:    %[[S_INIT:.*]] = bufferization.to_tensor %s_buf restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-NEXT:    %s = linalg.generic {{.*}} ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[S_INIT]] : tensor<4x8xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[P:[^:]*]]: f32, %[[Q:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[P]], %[[Q]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NEXT:    } -> tensor<4x8xf32>
// A tensor.empty with a buffer of its own is replaced by its view.
// CHECK-NEXT:    %c512 = arith.constant 512 : index
// CHECK-NEXT:    %d_buf = memref.view %arena[%c512][] : memref<896xi8> to memref<8x8xf32>
// CHECK-NEXT:    %d = bufferization.to_tensor %d_buf restrict writable : memref<8x8xf32> to tensor<8x8xf32>
// CHECK-NEXT:    %i = tensor.insert_slice %s into %d[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
// CHECK-NEXT:    %j = tensor.insert_slice %m into %i[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
// CHECK-NEXT:    func.return %j : tensor<8x8xf32>

// UPSTREAM-LABEL: func.func @layers
// UPSTREAM:         memref.alloc() {alignment = 64 : i64} : memref<896xi8>
// UPSTREAM:         memref.view

// BUF-LABEL: func.func @layers
// BUF-SAME:    (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x8xf32, 1>) -> memref<8x8xf32> {
// BUF-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<896xi8>
// BUF-NOT:     memref.alloc
// BUF:         %[[WD:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<896xi8> to memref<8x8xf32>
// BUF:         memref.dma_start %[[W]][%{{.*}}], %[[WD]][
// BUF:         %[[M:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<896xi8> to memref<4x8xf32>
// BUF-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[M]] : memref<4x8xf32>)
// BUF-NEXT:    linalg.matmul ins(%[[X]], %[[WD]] : memref<4x8xf32>, memref<8x8xf32>) outs(%[[M]] : memref<4x8xf32>)
// BUF:         %[[A:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<896xi8> to memref<4x8xf32>
// BUF-NEXT:    linalg.generic {{.*}} ins(%[[M]], %{{.*}} : memref<4x8xf32>, memref<4x8xf32>) outs(%[[A]] : memref<4x8xf32>)
// BUF:         %[[S:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<896xi8> to memref<4x8xf32>
// BUF-NEXT:    linalg.generic {{.*}} ins(%[[A]], %[[A]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[S]] : memref<4x8xf32>)
// BUF:         %[[D:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<896xi8> to memref<8x8xf32>
// BUF-NEXT:    %[[TOP:.*]] = memref.subview %[[D]][0, 0] [4, 8] [1, 1]
// BUF-NEXT:    memref.copy %[[S]], %[[TOP]]
// BUF-NEXT:    %[[BOTTOM:.*]] = memref.subview %[[D]][4, 0] [4, 8] [1, 1]
// BUF-NEXT:    memref.copy %[[M]], %[[BOTTOM]]
// BUF-NEXT:    return %[[D]] : memref<8x8xf32>

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @layers(%x: tensor<4x8xf32> {hyperoffload.offset = 0 : i64},
                  %w: !hyperoffload.remote<tensor<8x8xf32>>) -> tensor<8x8xf32>
    attributes {hyperoffload.arena_bytes = 896 : i64} {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant {hyperoffload.offsets = array<i64: 768>} dense<1.000000e+00> : tensor<4x8xf32>
  %wd = hyperoffload.prefetch %w {hyperoffload.offsets = array<i64: 128>} : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul {hyperoffload.offsets = array<i64: 384>} ins(%x, %wd : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  hyperoffload.detach %wd : tensor<8x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %one : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>)
      attrs = {hyperoffload.offsets = array<i64: 128>} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = arith.mulf %a, %a {hyperoffload.offsets = array<i64: 256>} : tensor<4x8xf32>
  %d = "tensor.empty"() {hyperoffload.offsets = array<i64: 512>} : () -> tensor<8x8xf32>
  %i = tensor.insert_slice %s into %d[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  %j = tensor.insert_slice %m into %i[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  func.return %j : tensor<8x8xf32>
}

// An accumulation into a value read again later gets a fresh buffer in the
// layout: the value is copied into its view, where the op accumulates.
// CHECK-LABEL: func.func @accumulate
// CHECK:         %b_buf = memref.view %arena[%c64][] : memref<192xi8> to memref<16xf32>
// CHECK-NEXT:    %[[B_INIT:.*]] = bufferization.to_tensor %b_buf restrict writable
// CHECK-NEXT:    %[[COPY:.*]] = linalg.generic {{.*}} ins(%a : tensor<16xf32>) outs(%[[B_INIT]] : tensor<16xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK-NEXT:    } -> tensor<16xf32>
// CHECK-NEXT:    %b = linalg.generic {{.*}} ins(%x : tensor<16xf32>) outs(%[[COPY]] : tensor<16xf32>) {

// BUF-LABEL: func.func @accumulate
// BUF-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<192xi8>
// BUF-NOT:     memref.alloc
// BUF:         %[[A:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<192xi8> to memref<16xf32>
// BUF-NEXT:    linalg.generic {{.*}} outs(%[[A]] : memref<16xf32>)
// BUF:         %[[B:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<192xi8> to memref<16xf32>
// BUF-NEXT:    linalg.generic {{.*}} ins(%[[A]] : memref<16xf32>) outs(%[[B]] : memref<16xf32>)
// BUF:         linalg.generic {{.*}} outs(%[[B]] : memref<16xf32>)
// BUF:         return %[[A]], %[[B]]

#v = affine_map<(d0) -> (d0)>
func.func @accumulate(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    attributes {hyperoffload.arena_bytes = 192 : i64} {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.mulf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%a : tensor<16xf32>)
      attrs = {hyperoffload.offsets = array<i64: 64>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  func.return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// A store reads its source until its wait: the wait comes before the first
// op that writes over the source's range ([0, 128): %c, not %b).
// CHECK-LABEL: func.func @park
// CHECK:         "memref.dma_start"(%h_src,
// CHECK-NEXT:    %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %b_buf = memref.view %arena[%[[C128]]][]
// CHECK-NEXT:    %[[B_INIT:.*]] = bufferization.to_tensor %b_buf restrict writable
// CHECK-NEXT:    %b = linalg.generic
// CHECK:         "memref.dma_wait"
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %c_buf = memref.view %arena[%[[C0]]][]
// CHECK-NEXT:    %[[C_INIT:.*]] = bufferization.to_tensor %c_buf restrict writable
// CHECK-NEXT:    %c = linalg.generic
// CHECK:         func.return %h, %c

func.func @park(%x: tensor<32xf32>) -> (!hyperoffload.remote<tensor<32xf32>>, tensor<32xf32>)
    attributes {hyperoffload.arena_bytes = 256 : i64} {
  %e = tensor.empty() : tensor<32xf32>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.mulf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %h = hyperoffload.store %a : tensor<32xf32> -> !hyperoffload.remote<tensor<32xf32>>
  %b = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>)
      attrs = {hyperoffload.offsets = array<i64: 128>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%b : tensor<32xf32>) outs(%e : tensor<32xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.subf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  func.return %h, %c : !hyperoffload.remote<tensor<32xf32>>, tensor<32xf32>
}

// MLP-LABEL: func.func @mlp
// MLP-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xi8>
// MLP-NOT:     memref.alloc()
// MLP:         %[[W1:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<16x32xf32>
// MLP:         %[[H:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<8x32xf32>
// MLP-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[H]] : memref<8x32xf32>)
// MLP-NEXT:    linalg.matmul ins(%{{.*}}, %[[W1]] : memref<8x16xf32>, memref<16x32xf32>) outs(%[[H]] : memref<8x32xf32>)
// The stored copy lives in the remote pool, outside the arena.
// MLP:         memref.alloc() : memref<8x32xf32, 1>
// MLP-NOT:     memref.alloc()
// MLP:         %[[Y:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<8x16xf32>
// MLP-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<8x16xf32>)
// MLP-NEXT:    linalg.matmul ins({{.*}}) outs(%[[Y]] : memref<8x16xf32>)
// MLP-NEXT:    return %[[Y]] : memref<8x16xf32>
