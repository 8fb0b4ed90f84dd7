// RUN: hyperoffload-opt %s -p 'hyperoffload-assign-offsets{hardware="%inputs/round.toml" layout=best-fit}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'test-print-layout{hardware="%inputs/round.toml" layout=best-fit}' | filecheck %s --check-prefix=LAYOUT
// RUN: hyperoffload-sim %s --hardware %inputs/round.toml --policy none --json | filecheck %s --check-prefix=DYNAMIC
// RUN: hyperoffload-sim %s --hardware %inputs/round.toml --policy plan --json | filecheck %s --check-prefix=STATIC
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=6144},hyperoffload-assign-offsets{hardware="%inputs/round.toml"}' | filecheck %s --check-prefix=FITS
// RUN: not hyperoffload-opt %s -p 'hyperoffload-assign-offsets{alignment=0}' 2>&1 | filecheck %s --check-prefix=BAD

// A program whose live bytes fit 6 KiB but whose addresses, handed out as a
// runtime allocator hands them out, do not. %x (1 KiB) and %y (2 KiB) are
// arguments, live throughout; %a and %b are 1 KiB, %c 2 KiB. In order of
// allocation a best-fit allocator puts %x at 0, %y at 1024, %a at 3072 and %b
// at 4096; %a dies once %b is computed, leaving a 1 KiB hole that the 2 KiB
// %c does not fit, so %c goes to 5120 and the arena is 7 KiB. The live bytes
// peak at 6 KiB (%x, %y, %b and %c while %c is computed).
//
// Knowing every lifetime, best-fit by decreasing size places %y at 0 and %c
// at 2048 (the 2 KiB ones first), %x above both at 4096; %a, which never
// meets %c, in %c's range at 2048; %b, which meets everyone, at 5120. The
// arena is 6 KiB: the live peak, nothing lost to fragmentation.

// CHECK-LABEL: func.func @f
// CHECK-SAME:    %x: tensor<16x16xf32> {hyperoffload.offset = 4096 : i64}
// CHECK-SAME:    %y: tensor<32x16xf32> {hyperoffload.offset = 0 : i64}
// CHECK-SAME:    hyperoffload.arena_bytes = 6144 : i64
// CHECK:         %a = linalg.matmul {{.*}}hyperoffload.offsets = array<i64: 2048>
// CHECK:         %b = linalg.matmul {{.*}}hyperoffload.offsets = array<i64: 5120>
// CHECK:         %c = linalg.matmul {{.*}}hyperoffload.offsets = array<i64: 2048>

// LAYOUT:      // layout of @f: arena 6144 B, live peak 6144 B (+0.0%), best-fit
// LAYOUT-NEXT: // [0, 2048) %y (argument), events [1, 8)
// LAYOUT-NEXT: // [2048, 3072) %a, events [2, 4)
// LAYOUT-NEXT: // [2048, 4096) %c, events [5, 9)
// LAYOUT-NEXT: // [4096, 5120) %x (argument), events [0, 7)
// LAYOUT-NEXT: // [5120, 6144) %b, events [3, 6)

// DYNAMIC: "peak_hbm_bytes": 6144,
// DYNAMIC: "arena_bytes": 7168,
// STATIC:  "peak_hbm_bytes": 6144,
// STATIC:  "arena_bytes": 6144,

// At a 6 KiB target the pipeline needs to move nothing: the plan fits in
// addresses as it is.
// FITS-LABEL: func.func @f
// FITS-NOT:     hyperoffload.prefetch
// FITS:         hyperoffload.arena_bytes = 6144 : i64

// BAD: error: alignment must be 1 or more, not 0

func.func @f(%x: tensor<16x16xf32>, %y: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %a = linalg.matmul ins(%x, %x : tensor<16x16xf32>, tensor<16x16xf32>) outs(%i : tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = linalg.matmul ins(%a, %x : tensor<16x16xf32>, tensor<16x16xf32>) outs(%i : tensor<16x16xf32>) -> tensor<16x16xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %c = linalg.matmul ins(%y, %b : tensor<32x16xf32>, tensor<16x16xf32>) outs(%i2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  func.return %c : tensor<32x16xf32>
}
