// A fetch is never issued before the copy it replaces is released: after the
// last read of the stored tensor, and once the store reading it ends (its
// detach waits for the store). Issued earlier, both copies are in HBM and
// the plan peaks above the program that moves nothing. Found by
// fuzz/differential.py (seed 1, program 100, move-window): with beta=0 the
// fetch of %a0 went right after its store, before the add that reads %a0,
// and the one of %t1 right after its detach while its store still read it:
// 2048 B against the unplanned program's 1536 B.
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=1319 prefetch-distance=0 place-arguments=true},hyperoffload-move-window{hbm-capacity=1319 beta=0 max-inflight=2}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=1319 prefetch-distance=0 place-arguments=true},hyperoffload-move-window{hbm-capacity=1319 beta=0 max-inflight=2}' | hyperoffload-sim /dev/stdin --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-sim %s --policy none --json | filecheck %s --check-prefix=SIM

// CHECK-LABEL: func.func @dag
// CHECK:         %t1 = arith.addf %a0, %a0
// CHECK:         hyperoffload.detach %a0
// CHECK:         %f4 = linalg.fill
// CHECK-NEXT:    %a0_1 = hyperoffload.prefetch %a0_remote
// CHECK-NEXT:    %t5 = linalg.matmul ins(%a0_1, %a0_1
// CHECK:         %e6 = tensor.empty()
// CHECK-NEXT:    %t1_1 = hyperoffload.prefetch %t1_remote

// The planned program and the unplanned one peak at 1536 B.
// SIM: "peak_hbm_bytes": 1536,

func.func @dag(%a0: tensor<16x16xbf16> {hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "params"}) -> (tensor<16x16xbf16>) {
  %t1 = arith.addf %a0, %a0 : tensor<16x16xbf16>
  %e2 = tensor.empty() : tensor<16x16xbf16>
  %c3 = arith.constant 0.000000000e+00 : bf16
  %f4 = linalg.fill ins(%c3 : bf16) outs(%e2 : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %t5 = linalg.matmul ins(%a0, %a0 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%f4 : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %e6 = tensor.empty() : tensor<16x16xbf16>
  %t11 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t1, %t1 : tensor<16x16xbf16>, tensor<16x16xbf16>) outs(%e6 : tensor<16x16xbf16>) {
  ^bb0(%b7: bf16, %b8: bf16, %b9: bf16):
    %s10 = arith.subf %b7, %b8 : bf16
    linalg.yield %s10 : bf16
  } -> tensor<16x16xbf16>
  func.return %t11 : tensor<16x16xbf16>
}
