// The optional `compress` attribute of store and prefetch: the custom and
// generic forms round-trip, upstream reads the generic form with the dialect
// loaded from its IRDL export, and the verifier rejects (with a location)
// what it cannot mean.
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | grep -v ': error: ' | hyperoffload-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics --print-op-generic | grep -v ': error: ' | tee %t.generic | hyperoffload-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: filecheck %s --check-prefix=GENERIC < %t.generic
// RUN: mlir-opt %t.generic --split-input-file --irdl-file=%irdl --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @compressed
// CHECK-NEXT:    %h = hyperoffload.store %x {compress = "int8"} : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
// CHECK-NEXT:    hyperoffload.detach %x : tensor<4x8xf32>
// CHECK-NEXT:    %kd = hyperoffload.prefetch %k {compress = "int8"} : !hyperoffload.remote<tensor<1x2x16x8xbf16>, host> -> tensor<1x2x16x8xbf16>
// CHECK-NEXT:    %xd = hyperoffload.prefetch %h {compress = "int8"} : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
// CHECK-NEXT:    %w = hyperoffload.store %v : tensor<4xf16> -> !hyperoffload.remote<tensor<4xf16>>
// CHECK-NEXT:    func.return %xd, %kd, %w
// ROUND-LABEL: func.func @compressed
// ROUND-NEXT:    hyperoffload.store %{{.*}} {compress = "int8"} : tensor<4x8xf32>
// ROUND-NEXT:    hyperoffload.detach
// ROUND-NEXT:    hyperoffload.prefetch %{{.*}} {compress = "int8"} : !hyperoffload.remote<tensor<1x2x16x8xbf16>, host>
// ROUND-NEXT:    hyperoffload.prefetch %{{.*}} {compress = "int8"} : !hyperoffload.remote<tensor<4x8xf32>>
// ROUND-NEXT:    hyperoffload.store %{{.*}} : tensor<4xf16>
// GENERIC:       "hyperoffload.store"(%{{.*}}) {compress = "int8"} : (tensor<4x8xf32>) -> !hyperoffload.remote<tensor<4x8xf32>, #hyperoffload.tier<"remote">>
// GENERIC:       "hyperoffload.prefetch"(%{{.*}}) {compress = "int8"} : (!hyperoffload.remote<tensor<1x2x16x8xbf16>, #hyperoffload.tier<"host">>) -> tensor<1x2x16x8xbf16>
// GENERIC:       "hyperoffload.prefetch"(%{{.*}}) {compress = "int8"} : (!hyperoffload.remote<tensor<4x8xf32>, #hyperoffload.tier<"remote">>) -> tensor<4x8xf32>
// GENERIC:       "hyperoffload.store"(%{{.*}}) : (tensor<4xf16>) -> !hyperoffload.remote<tensor<4xf16>, #hyperoffload.tier<"remote">>
func.func @compressed(%x: tensor<4x8xf32>, %v: tensor<4xf16>,
                      %k: !hyperoffload.remote<tensor<1x2x16x8xbf16>, host> {hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "kv"})
    -> (tensor<4x8xf32>, tensor<1x2x16x8xbf16>, !hyperoffload.remote<tensor<4xf16>>) {
  %h = hyperoffload.store %x {compress = "int8"} : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
  hyperoffload.detach %x : tensor<4x8xf32>
  %kd = hyperoffload.prefetch %k {compress = "int8"} : !hyperoffload.remote<tensor<1x2x16x8xbf16>, host> -> tensor<1x2x16x8xbf16>
  %xd = hyperoffload.prefetch %h {compress = "int8"} : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %w = hyperoffload.store %v : tensor<4xf16> -> !hyperoffload.remote<tensor<4xf16>>
  func.return %xd, %kd, %w : tensor<4x8xf32>, tensor<1x2x16x8xbf16>, !hyperoffload.remote<tensor<4xf16>>
}

// -----

// The generic spelling reads back as the custom one.
// CHECK-LABEL: func.func @generic_input
// CHECK-NEXT:    hyperoffload.store %x {compress = "int8"} : tensor<2x64xf64>
// ROUND-LABEL: func.func @generic_input
// ROUND-NEXT:    hyperoffload.store %{{.*}} {compress = "int8"} : tensor<2x64xf64>
// GENERIC:       "hyperoffload.store"(%{{.*}}) {compress = "int8"} : (tensor<2x64xf64>)
func.func @generic_input(%x: tensor<2x64xf64>) -> !hyperoffload.remote<tensor<2x64xf64>> {
  %h = "hyperoffload.store"(%x) {compress = "int8"} : (tensor<2x64xf64>) -> !hyperoffload.remote<tensor<2x64xf64>, #hyperoffload.tier<"remote">>
  func.return %h : !hyperoffload.remote<tensor<2x64xf64>>
}

// -----

// An unknown scheme.
func.func @unknown_scheme(%x: tensor<4xf32>) -> !hyperoffload.remote<tensor<4xf32>> {
  %h = hyperoffload.store %x {compress = "int4"} : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  func.return %h : !hyperoffload.remote<tensor<4xf32>>
}
// CHECK: compress.mlir:[[# @LINE - 3]]:3: error: 'hyperoffload.store': unknown compression "int4" on store, expected one of "int8"

// -----

// Only float tensors compress: an integer store...
func.func @integer_store(%x: tensor<4xi32>) -> !hyperoffload.remote<tensor<4xi32>> {
  %h = hyperoffload.store %x {compress = "int8"} : tensor<4xi32> -> !hyperoffload.remote<tensor<4xi32>>
  func.return %h : !hyperoffload.remote<tensor<4xi32>>
}
// CHECK: compress.mlir:[[# @LINE - 3]]:3: error: 'hyperoffload.store': only float tensors may be compressed, but store moves tensor<4xi32>

// -----

// ...and an integer prefetch are rejected.
func.func @integer_prefetch(%w: !hyperoffload.remote<tensor<4xi8>>) -> tensor<4xi8> {
  %y = hyperoffload.prefetch %w {compress = "int8"} : !hyperoffload.remote<tensor<4xi8>> -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}
// CHECK: compress.mlir:[[# @LINE - 3]]:3: error: 'hyperoffload.prefetch': only float tensors may be compressed, but prefetch moves tensor<4xi8>

// -----

// A prefetch of a compressed store's copy must decompress it...
func.func @uncompressed_prefetch_of_compressed_store(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x {compress = "int8"} : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: compress.mlir:[[# @LINE - 3]]:3: error: 'hyperoffload.prefetch': prefetch with no compress reads a copy stored with compress = "int8": they must match

// -----

// ...and a compressed prefetch may not read a plain copy.
func.func @compressed_prefetch_of_plain_store(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = hyperoffload.prefetch %h {compress = "int8"} : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: compress.mlir:[[# @LINE - 3]]:3: error: 'hyperoffload.prefetch': prefetch with compress = "int8" reads a copy stored with no compress: they must match
