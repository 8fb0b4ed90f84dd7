// RUN: hyperoffload-opt %s -p hyperoffload-strip --split-input-file --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {hyperoffload.tier = #hyperoffload.tier<host>}) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = arith.addf %x, %x : tensor<4x8xf32>
// CHECK-NEXT:    %e = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %z = linalg.matmul ins(%y, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %r = arith.addf %z, %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @mlp(%x: tensor<4x8xf32>, %w: !hyperoffload.remote<tensor<8x8xf32>, host>) -> tensor<4x8xf32> {
  %y = arith.addf %x, %x : tensor<4x8xf32>
  %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
  hyperoffload.detach %x : tensor<4x8xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<8x8xf32>, host> -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.matmul ins(%y, %wd : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  hyperoffload.detach %wd : tensor<8x8xf32>
  %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %r = arith.addf %z, %xd : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// A written-back result (a returned remote copy) is returned as the tensor.
// CHECK-LABEL: func.func @written_back(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    func.return %x : tensor<4xf32>
// CHECK-NEXT:  }
func.func @written_back(%x: tensor<4xf32>) -> !hyperoffload.remote<tensor<4xf32>> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  func.return %h : !hyperoffload.remote<tensor<4xf32>>
}

// -----

// A remote copy handed to another function cannot be stripped.
// CHECK: strip.mlir:{{[0-9]+}}:3: error: cannot strip: the remote copy %h escapes through 'func.call'
func.func private @sink(!hyperoffload.remote<tensor<4xf32>>) -> ()
func.func @escapes(%x: tensor<4xf32>) {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  func.call @sink(%h) : (!hyperoffload.remote<tensor<4xf32>>) -> ()
  func.return
}
