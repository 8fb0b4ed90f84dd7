// A routed MoE decode step planned as a whole (docs/passes.md, "Routed
// experts"): the tiny-moe export of %inputs/tiny_moe_routed_decode.mlir
// peaks at 464.72 KB with unlimited HBM (hyperoffload-sim --policy none), of
// which the routed experts' weights are 196.61 KB and everything else
// 268.11 KB. At 278 KB (60% of the unconstrained peak) offloading the
// experts alone cannot fit, so the dense weights, the KV cache and the
// activations are planned with the experts under the one target: the dense
// weights are fetched before their layer and released after it, and every
// expert stays resident.
// RUN: hyperoffload-opt %inputs/tiny_moe_routed_decode.mlir -p 'hyperoffload-pipeline{hbm-capacity=278KB}' -o %t.mlir 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// The planned program runs within the target, and computes what the
// program as exported does; upstream reads it lowered.
// RUN: hyperoffload-sim %t.mlir --hbm-capacity 278KB --execute | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %t.mlir -p convert-hyperoffload-to-linalg --print-op-generic | mlir-opt > /dev/null
// Lower, experts are fetched in their branches too, from one budget.
// RUN: hyperoffload-opt %inputs/tiny_moe_routed_decode.mlir -p 'hyperoffload-pipeline{hbm-capacity=90KB}' 2>&1 | filecheck %s --check-prefix=COLD

// REMARK: hyperoffload-pipeline: remark: @decode: planned as a whole: 8 routed experts resident, 0 fetched ahead of their router, the rest in their branches; 196.61 KB for experts beside 81.39 KB for the rest; as written: peak 230.97 KB, slowdown +0.69%

// IR-LABEL: func.func @decode
// IR-SAME:    %arg5: !hyperoffload.remote<tensor<128x64xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// IR-SAME:    %arg7: !hyperoffload.remote<tensor<64x64xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}
// IR-SAME:    %arg13: tensor<32x64xf32> {hyperoffload.expert = array<i64: 0, 0>, hyperoffload.tier = #hyperoffload.tier<hbm>}
// IR-SAME:    hyperoffload.expert_plan = {budget = 196608 : i64, routing = "uniform"}
// IR:         %arg7_1 = hyperoffload.prefetch %arg7 : !hyperoffload.remote<tensor<64x64xf32>> -> tensor<64x64xf32>
// IR:         hyperoffload.detach %arg7_1 : tensor<64x64xf32>
// IR:         %expert_l0e0 = scf.if %routed_l0e0 -> (tensor<1x64xf32>) {
// IR-NOT:       hyperoffload.prefetch
// IR:         }{hyperoffload.expert = array<i64: 0, 0>}

// SIM: plan {{ +}}230.97 KB {{.*}} peak -50.3%, time +0.7% {{ +}}no
// SIM: outputs_match_reference: True

// COLD: remark: @decode: planned as a whole: 0 routed experts resident, 0 fetched ahead of their router, the rest in their branches
// COLD-SAME: as written: peak 34.36 KB, slowdown +11.82%
// COLD:       %expert_l0e0 = scf.if %routed_l0e0 -> (tensor<1x64xf32>) {
// COLD-NEXT:    %arg15_1 = hyperoffload.prefetch %arg15 : !hyperoffload.remote<tensor<32x64xf32>> -> tensor<32x64xf32>
// COLD:         hyperoffload.detach %arg13_1 : tensor<32x64xf32>
// COLD:       }{hyperoffload.expert = array<i64: 0, 0>}
