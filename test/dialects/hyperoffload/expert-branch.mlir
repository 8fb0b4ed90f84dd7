// A two-expert toy mixture of experts (docs/dialect.md, "Conditional regions
// (experts)"): the router's %routed picks one expert. The hot expert's
// weights are resident (a device tensor argument) and read in place in its
// branch; the cold expert's weights live in the remote pool, so its branch
// prefetches them, reads them and detaches them, all inside the branch. The
// program verifies, round-trips, and upstream mlir-opt (the dialect loaded
// from its IRDL export) reads its generic form, and we read upstream's back.
// RUN: hyperoffload-opt %s | filecheck %s
// RUN: hyperoffload-opt %s | hyperoffload-opt | filecheck %s
// RUN: hyperoffload-opt %s -p hyperoffload-verify | filecheck %s
// RUN: hyperoffload-opt %s --print-op-generic | mlir-opt --irdl-file=%irdl | filecheck %s --check-prefix=UPSTREAM
// RUN: hyperoffload-opt %s --print-op-generic | mlir-opt --irdl-file=%irdl --mlir-print-op-generic | hyperoffload-opt | filecheck %s --check-prefix=BACK

// CHECK-LABEL: func.func @two_experts
// CHECK-SAME:    %w_hot: tensor<4x4xf32>, %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK:         %y = scf.if %routed -> (tensor<2x4xf32>) {
// CHECK-NEXT:      %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:      scf.yield %hot : tensor<2x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %wd = hyperoffload.prefetch %w_cold : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
// CHECK-NEXT:      %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:      hyperoffload.detach %wd : tensor<4x4xf32>
// CHECK-NEXT:      scf.yield %cold : tensor<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = arith.addf %x, %y : tensor<2x4xf32>
// CHECK-NEXT:    func.return %r : tensor<2x4xf32>

// UPSTREAM-LABEL: func.func @two_experts
// UPSTREAM:         scf.if %arg1 -> (tensor<2x4xf32>) {
// UPSTREAM-NEXT:      linalg.matmul ins(%arg0, %arg2 : tensor<2x4xf32>, tensor<4x4xf32>)
// UPSTREAM-NEXT:      scf.yield
// UPSTREAM-NEXT:    } else {
// UPSTREAM-NEXT:      %[[WD:.*]] = "hyperoffload.prefetch"(%arg3) : (!hyperoffload.remote<tensor<4x4xf32>, #hyperoffload.tier<"remote">>) -> tensor<4x4xf32>
// UPSTREAM-NEXT:      linalg.matmul ins(%arg0, %[[WD]] : tensor<2x4xf32>, tensor<4x4xf32>)
// UPSTREAM-NEXT:      "hyperoffload.detach"(%[[WD]]) : (tensor<4x4xf32>) -> ()
// UPSTREAM-NEXT:      scf.yield

// BACK-LABEL: func.func @two_experts
// BACK:         scf.if
// BACK:         } else {
// BACK-NEXT:      hyperoffload.prefetch %{{.*}} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
// BACK-NEXT:      linalg.matmul
// BACK-NEXT:      hyperoffload.detach %{{.*}} : tensor<4x4xf32>
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

// A tensor defined above the scf.if may be detached inside a branch: each
// branch is its own path, so the else branch still reads %t after the then
// branch's detach, and nothing after the scf.if reads it.
// CHECK-LABEL: func.func @detach_in_each_branch
// CHECK:         scf.if %routed -> (tensor<4xf32>) {
// CHECK-NEXT:      %a = arith.addf %t, %t : tensor<4xf32>
// CHECK-NEXT:      hyperoffload.detach %t : tensor<4xf32>
// CHECK:         } else {
// CHECK-NEXT:      %b = arith.mulf %t, %t : tensor<4xf32>
// CHECK-NEXT:      hyperoffload.detach %t : tensor<4xf32>
// UPSTREAM-LABEL: func.func @detach_in_each_branch
// BACK-LABEL: func.func @detach_in_each_branch
func.func @detach_in_each_branch(%x: tensor<4xf32>, %routed: i1) -> tensor<4xf32> {
  %t = arith.addf %x, %x : tensor<4xf32>
  %y = scf.if %routed -> (tensor<4xf32>) {
    %a = arith.addf %t, %t : tensor<4xf32>
    hyperoffload.detach %t : tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    %b = arith.mulf %t, %t : tensor<4xf32>
    hyperoffload.detach %t : tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
