// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=3072}' 2>&1 | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=3072}' | hyperoffload-sim /dev/stdin --hbm-capacity 3072 --json | filecheck %s --check-prefix=SIM

// A written-back result (its result attribute names the pool) leaves HBM
// after its last use: the plan meets 3072 B (x, a and b at the last op)
// without offloading anything else, and says so.
// CHECK-NOT:     warning
// CHECK-LABEL: func.func @write_back
// CHECK-NEXT:    %k = arith.mulf %x, %x
// CHECK-NEXT:    %k_remote = hyperoffload.store %k
// CHECK-NEXT:    hyperoffload.detach %k
// CHECK-NEXT:    %a = arith.addf %x, %x
// CHECK-NEXT:    %b = arith.addf %a, %a
// CHECK-NEXT:    func.return %b, %k_remote
// SIM: "peak_hbm_bytes": 3072,
// SIM: "oom": false,
func.func @write_back(%x: tensor<256xf32>)
    -> (tensor<256xf32>, tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %k = arith.mulf %x, %x : tensor<256xf32>
  %a = arith.addf %x, %x : tensor<256xf32>
  %b = arith.addf %a, %a : tensor<256xf32>
  func.return %b, %k : tensor<256xf32>, tensor<256xf32>
}
