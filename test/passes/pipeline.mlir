// The pipeline inserts (a prefetch one op ahead) and then moves the prefetch
// as far ahead as hiding its 10.24 us transfer needs on the round-figure
// hardware (test/inputs/round.toml: five 2.048 us ops), and verifies.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml"}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hardware="%inputs/round.toml"}' | filecheck %s --check-prefix=INSERTED

// INSERTED:      %a4 = arith.mulf %a3, %a3
// INSERTED-NEXT: %w_1 = hyperoffload.prefetch %w
// INSERTED-NEXT: %a5 = arith.mulf %a4, %a4

// CHECK-LABEL: func.func @f
// CHECK-SAME:    %w: !hyperoffload.remote<tensor<256xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// CHECK-NEXT:    %w_1 = hyperoffload.prefetch %w
// CHECK-NEXT:    %a1 = arith.mulf %x, %x
// CHECK-NEXT:    %a2 = arith.mulf %a1, %a1
// CHECK-NEXT:    %a3 = arith.mulf %a2, %a2
// CHECK-NEXT:    %a4 = arith.mulf %a3, %a3
// CHECK-NEXT:    %a5 = arith.mulf %a4, %a4
// CHECK-NEXT:    %r = arith.mulf %a5, %w_1
// CHECK-NEXT:    hyperoffload.detach %w_1
// CHECK-NEXT:    func.return %r
func.func @f(%x: tensor<256xf32>, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a1 = arith.mulf %x, %x : tensor<256xf32>
  %a2 = arith.mulf %a1, %a1 : tensor<256xf32>
  %a3 = arith.mulf %a2, %a2 : tensor<256xf32>
  %a4 = arith.mulf %a3, %a3 : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %r = arith.mulf %a5, %w : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
