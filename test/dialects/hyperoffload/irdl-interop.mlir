// Upstream mlir-opt, with the dialect loaded from its IRDL export, parses and
// verifies the generic form of a program that uses every op, type and attribute.
// RUN: hyperoffload-opt %s --print-op-generic | mlir-opt --irdl-file=%irdl | filecheck %s
// RUN: hyperoffload-opt %s --print-op-generic | mlir-opt --irdl-file=%irdl --mlir-print-op-generic | hyperoffload-opt | filecheck %s --check-prefix=BACK
// A malformed op is rejected by upstream's IRDL verifier.
// RUN: hyperoffload-opt %s --print-op-generic | sed 's/"hyperoffload.detach"(%x) : (tensor<4x8xf32>)/"hyperoffload.detach"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>)/' | not mlir-opt --irdl-file=%irdl 2>&1 | filecheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @offload
// CHECK-SAME:    !hyperoffload.remote<tensor<8x8xf32>, #hyperoffload.tier<"remote">> {hyperoffload.tier = #hyperoffload.tier<"remote">}
// CHECK:         "hyperoffload.prefetch"(%arg1) : (!hyperoffload.remote<tensor<8x8xf32>, #hyperoffload.tier<"remote">>) -> tensor<8x8xf32>
// CHECK:         "hyperoffload.store"(%arg0) : (tensor<4x8xf32>) -> !hyperoffload.remote<tensor<4x8xf32>, #hyperoffload.tier<"host">>
// CHECK:         "hyperoffload.detach"(%arg0) : (tensor<4x8xf32>) -> ()

// BACK-LABEL: func.func @offload
// BACK:         hyperoffload.prefetch %{{.*}} : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
// BACK:         hyperoffload.store %{{.*}} : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>, host>

// BAD: error: op expects exactly 1 operands, but got 2
// BAD-NEXT: "hyperoffload.detach"(%x, %x)
func.func @offload(%x: tensor<4x8xf32>,
                   %w: !hyperoffload.remote<tensor<8x8xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> (tensor<4x8xf32>, tensor<8x8xf32>) {
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
  %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>, host>
  hyperoffload.detach %x : tensor<4x8xf32>
  %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4x8xf32>, host> -> tensor<4x8xf32>
  func.return %xd, %wd : tensor<4x8xf32>, tensor<8x8xf32>
}
