// RUN: hyperoffload-opt %s -p test-print-lifetimes | filecheck %s

// Each tensor<256xf32> is 1024 B; on ascend-910c an elementwise op on them
// takes 10 us of per-op overhead plus a few ns of HBM traffic.
// CHECK:      // lifetimes of @f (peak 5120 B at op 2)
// CHECK-NEXT: %x: 1024 B, params, tier hbm, producer entry, uses [0], last use 0, gaps [entry -> 0: 0 ops, 0.000 us]
// CHECK-NEXT: %w: 1024 B, params, tier remote, producer entry, uses [1], last use 1, gaps [entry -> 1: 1 ops, 10.002 us]
// CHECK-NEXT: %a: 1024 B, activations, tier hbm, producer 0, uses [1, 3], last use 3, gaps [0 -> 1: 0 ops, 0.000 us, 1 -> 3: 1 ops, 10.002 us]
// CHECK-NEXT: %b: 1024 B, activations, tier hbm, producer 1, uses [2], last use 2, gaps [1 -> 2: 0 ops, 0.000 us]
// CHECK-NEXT: %c: 1024 B, activations, tier hbm, producer 2, uses [3], last use 3, gaps [2 -> 3: 0 ops, 0.000 us]
// CHECK-NEXT: %d: 1024 B, activations, tier hbm, producer 3, uses [return], last use return, gaps [3 -> return: 0 ops, 0.000 us]
// The live bytes while each op runs: x and w stay (arguments), b and c die at
// their last use.
// CHECK-NEXT: // live bytes per op: [3072, 4096, 5120, 5120, 3072]
// CHECK-LABEL: func.func @f
func.func @f(%x: tensor<256xf32>, %w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<256xf32> {
  %a = arith.addf %x, %x : tensor<256xf32>
  %b = arith.mulf %a, %w : tensor<256xf32>
  %c = arith.mulf %b, %b : tensor<256xf32>
  %d = arith.addf %c, %a : tensor<256xf32>
  func.return %d : tensor<256xf32>
}
