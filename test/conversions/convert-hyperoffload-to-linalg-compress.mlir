// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s
// Upstream reads the result with no custom dialect loaded, and bufferizes it.
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | filecheck %s --check-prefix=BUF
// Down to LLVM with plain mlir-opt (synchronous copies, frees left to upstream).
// RUN: hyperoffload-opt %s -p 'convert-hyperoffload-to-linalg{dma=false dealloc=false}' --print-op-generic \
// RUN:   | mlir-opt --convert-elementwise-to-linalg \
// RUN:       --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:       --buffer-results-to-out-params=modify-public-functions=1 --buffer-deallocation-pipeline \
// RUN:       --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:       --finalize-memref-to-llvm --convert-math-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:       --convert-func-to-llvm --reconcile-unrealized-casts | filecheck %s --check-prefix=LLVM
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s --check-prefix=GONE
// GONE-NOT: hyperoffload

// A compressed store quantises with linalg (absmax per row, the f16 scale,
// then divide, round, clamp and cast to i8) and copies the int8 values and
// the scales into two buffers in the tier; its prefetch copies both back and
// dequantises right before the first consumer, freeing the staging buffers.
// CHECK-LABEL: func.func @park
// CHECK:         %a = arith.mulf %x, %x : tensor<4x64xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT:    %a_absmax = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x64xf32>) outs(%[[FILL]] : tensor<4xf32>)
// CHECK:           math.absf
// CHECK-NEXT:      arith.maximumf
// CHECK:         %a_scales = linalg.generic {{.*}} ins(%a_absmax : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK:           arith.divf
// CHECK-NEXT:      arith.minimumf
// CHECK-NEXT:      arith.truncf %{{.*}} : f32 to f16
// CHECK:         %a_q = linalg.generic {{.*}} ins(%a, %a_scales : tensor<4x64xf32>, tensor<4xf16>) outs(%{{.*}} : tensor<4x64xi8>)
// CHECK:           arith.divf
// CHECK-NEXT:      math.roundeven
// CHECK-NEXT:      arith.maximumf
// CHECK-NEXT:      arith.minimumf
// CHECK-NEXT:      arith.cmpf ogt
// CHECK-NEXT:      arith.select
// CHECK-NEXT:      arith.fptosi %{{.*}} : f32 to i8
// CHECK:         %h_q_src = bufferization.to_buffer %a_q read_only : tensor<4x64xi8> to memref<4x64xi8>
// CHECK-NEXT:    %h_q = memref.alloc() : memref<4x64xi8, 1 : i64>
// CHECK:         "memref.dma_start"(%h_q_src, %{{.*}}, %h_q,
// CHECK:         %h_scales_src = bufferization.to_buffer %a_scales read_only : tensor<4xf16> to memref<4xf16>
// CHECK-NEXT:    %h_scales = memref.alloc() : memref<4xf16, 1 : i64>
// CHECK:         "memref.dma_start"(%h_scales_src, %{{.*}}, %h_scales,
// CHECK:         %b = arith.addf %x, %x
// CHECK:         %ad_q_buf = memref.alloc() : memref<4x64xi8>
// CHECK-NEXT:    %ad_scales_buf = memref.alloc() : memref<4xf16>
// CHECK:         "memref.dma_start"(%h_q, %{{.*}}, %ad_q_buf,
// CHECK:         "memref.dma_start"(%h_scales, %{{.*}}, %ad_scales_buf,
// CHECK-NEXT:    %c = arith.mulf %b, %b
// CHECK-NEXT:    "memref.dma_wait"
// CHECK-NEXT:    %ad_q = bufferization.to_tensor %ad_q_buf restrict
// CHECK-NEXT:    "memref.dma_wait"
// CHECK-NEXT:    %ad_scales = bufferization.to_tensor %ad_scales_buf restrict
// CHECK:         %ad = linalg.generic {{.*}} ins(%ad_q, %ad_scales : tensor<4x64xi8>, tensor<4xf16>) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: i8, %{{.*}}: f16, %{{.*}}: f32):
// CHECK-NEXT:      arith.sitofp %{{.*}} : i8 to f32
// CHECK-NEXT:      arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      linalg.yield
// CHECK:         memref.dealloc %ad_q_buf : memref<4x64xi8>
// CHECK-NEXT:    memref.dealloc %ad_scales_buf : memref<4xf16>
// CHECK-NEXT:    %r = arith.addf %c, %ad
// CHECK-NEXT:    func.return %r

// UPSTREAM-LABEL: func.func @park
// UPSTREAM:         memref.dma_start %{{.*}}, %{{.*}}[%c0{{.*}}], %c256, %{{.*}} : memref<4x64xi8>, memref<4x64xi8, 1>, memref<1xi32>
// UPSTREAM:         memref.dma_start %{{.*}}, %{{.*}}[%c0{{.*}}], %c4, %{{.*}} : memref<4xf16>, memref<4xf16, 1>, memref<1xi32>

// BUF-LABEL: func.func @park
// BUF:         linalg.generic {{.*}} ins(%{{.*}} : memref<4x64xf32>) outs(%{{.*}} : memref<4xf32>)
// BUF:         memref.dma_start {{.*}} : memref<4x64xi8>, memref<4x64xi8, 1>, memref<1xi32>
// BUF:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<4x64xi8>, memref<4xf16>) outs(%{{.*}} : memref<4x64xf32>)

// LLVM: llvm.func @park
// LLVM-NOT: hyperoffload
func.func @park(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %a = arith.mulf %x, %x : tensor<4x64xf32>
  %h = hyperoffload.store %a {compress = "int8"} : tensor<4x64xf32> -> !hyperoffload.remote<tensor<4x64xf32>>
  hyperoffload.detach %a : tensor<4x64xf32>
  %b = arith.addf %x, %x : tensor<4x64xf32>
  %ad = hyperoffload.prefetch %h {compress = "int8"} : !hyperoffload.remote<tensor<4x64xf32>> -> tensor<4x64xf32>
  %c = arith.mulf %b, %b : tensor<4x64xf32>
  %r = arith.addf %c, %ad : tensor<4x64xf32>
  hyperoffload.detach %ad : tensor<4x64xf32>
  func.return %r : tensor<4x64xf32>
}

// A compressed prefetch of an argument reads the caller's copy (the ABI of a
// remote copy: a memref of the tensor's type) and rounds it through the
// quantiser on the device; bf16 is widened to f32 to compute and narrowed
// back. A compressed copy returned to the caller (a write-back) is also
// decoded into a buffer of the tensor's type in the tier, the handle the
// caller gets.
// CHECK-LABEL: func.func @decode
// CHECK-SAME:    (%k: memref<2x16xbf16, 1 : i64>, %q: tensor<2x16xbf16>) -> (tensor<2x16xbf16>, memref<2x16xbf16, 1 : i64>)
// CHECK:         "memref.dma_start"(%k, %{{.*}}, %kd_copy_buf,
// CHECK:         %kd_copy = bufferization.to_tensor %kd_copy_buf restrict
// CHECK:         %kd_absmax = linalg.generic {{.*}} ins(%kd_copy : tensor<2x16xbf16>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         %kd_q = linalg.generic
// CHECK:         %kd = linalg.generic {{.*}} ins(%kd_q, %kd_scales : tensor<2x16xi8>, tensor<2xf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         memref.dealloc %kd_copy_buf
// CHECK:         %n = arith.addf %kd, %q
// CHECK:         %n_q = linalg.generic
// CHECK:         %n_remote_decoded = linalg.generic {{.*}} ins(%n_q, %n_scales : tensor<2x16xi8>, tensor<2xf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK:         %n_remote_q = memref.alloc() : memref<2x16xi8, 1 : i64>
// CHECK:         %n_remote_scales = memref.alloc() : memref<2xf16, 1 : i64>
// CHECK:         %n_remote_src = bufferization.to_buffer %n_remote_decoded read_only
// CHECK-NEXT:    %n_remote = memref.alloc() : memref<2x16xbf16, 1 : i64>
// CHECK:         func.return %kd, %n_remote : tensor<2x16xbf16>, memref<2x16xbf16, 1 : i64>
func.func @decode(%k: !hyperoffload.remote<tensor<2x16xbf16>> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"},
                  %q: tensor<2x16xbf16>)
    -> (tensor<2x16xbf16>, !hyperoffload.remote<tensor<2x16xbf16>> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %kd = hyperoffload.prefetch %k {compress = "int8"} : !hyperoffload.remote<tensor<2x16xbf16>> -> tensor<2x16xbf16>
  %n = arith.addf %kd, %q : tensor<2x16xbf16>
  %n_remote = hyperoffload.store %n {compress = "int8"} : tensor<2x16xbf16> -> !hyperoffload.remote<tensor<2x16xbf16>>
  hyperoffload.detach %n : tensor<2x16xbf16>
  func.return %kd, %n_remote : tensor<2x16xbf16>, !hyperoffload.remote<tensor<2x16xbf16>>
}
