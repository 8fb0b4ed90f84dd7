// RUN: hyperoffload-opt %s | hyperoffload-opt | filecheck %s
// RUN: hyperoffload-opt %s --print-op-generic | hyperoffload-opt | filecheck %s
// RUN: hyperoffload-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @all_ops
// CHECK-SAME:    %w: !hyperoffload.remote<tensor<8x8xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-SAME:    %k: !hyperoffload.remote<tensor<4x8xbf16>, host>
// CHECK-NEXT:    %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
// CHECK-NEXT:    hyperoffload.detach %x : tensor<4x8xf32>
// CHECK-NEXT:    %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
// CHECK-NEXT:    %kd = hyperoffload.prefetch %k : !hyperoffload.remote<tensor<4x8xbf16>, host> -> tensor<4x8xbf16>
// CHECK-NEXT:    %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = arith.addf %xd, %xd : tensor<4x8xf32>
// CHECK-NEXT:    hyperoffload.detach %xd : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y, %wd, %kd

// GENERIC:      "hyperoffload.store"(%x) : (tensor<4x8xf32>) -> !hyperoffload.remote<tensor<4x8xf32>, #hyperoffload.tier<"remote">>
// GENERIC:      "hyperoffload.detach"(%x) : (tensor<4x8xf32>) -> ()
// GENERIC:      "hyperoffload.prefetch"(%k) : (!hyperoffload.remote<tensor<4x8xbf16>, #hyperoffload.tier<"host">>) -> tensor<4x8xbf16>
func.func @all_ops(%x: tensor<4x8xf32>,
                   %w: !hyperoffload.remote<tensor<8x8xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>},
                   %k: !hyperoffload.remote<tensor<4x8xbf16>, host>)
    -> (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xbf16>) {
  %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
  hyperoffload.detach %x : tensor<4x8xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
  %kd = hyperoffload.prefetch %k : !hyperoffload.remote<tensor<4x8xbf16>, host> -> tensor<4x8xbf16>
  %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4x8xf32>> -> tensor<4x8xf32>
  %y = arith.addf %xd, %xd : tensor<4x8xf32>
  hyperoffload.detach %xd : tensor<4x8xf32>
  func.return %y, %wd, %kd : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @tiers
// CHECK-SAME:    tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>}
// CHECK-SAME:    tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-SAME:    tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<host>}
// CHECK-SAME:    !hyperoffload.remote<tensor<2xf32>, ssd>
func.func @tiers(%a: tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<hbm>},
                 %b: tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<"remote">},
                 %c: tensor<2xf32> {hyperoffload.tier = #hyperoffload.tier<host>},
                 %d: !hyperoffload.remote<tensor<2xf32>, #hyperoffload.tier<"ssd">>) {
  func.return
}

// CHECK-LABEL: func.func @nested_region_reads_prefetched_value
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %wd, %wd
// CHECK:         hyperoffload.detach %wd
func.func @nested_region_reads_prefetched_value(%w: !hyperoffload.remote<tensor<4xf32>>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %step = arith.constant 1 : index
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  scf.for %i = %lb to %ub step %step {
    %s = arith.addf %wd, %wd : tensor<4xf32>
  }
  hyperoffload.detach %wd : tensor<4xf32>
  func.return
}
