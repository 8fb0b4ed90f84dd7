// Speculative fetches of routed experts (docs/passes.md, "Routed experts"):
// a cold expert chosen more often than not is fetched ahead of the router.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=40KB routing="trace:%inputs/speculate_routing.json"}' 2>&1 | filecheck %s --check-prefix=AHEAD
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=40KB routing="trace:%inputs/speculate_routing.json" speculate=false}' 2>&1 | filecheck %s --check-prefix=NOAHEAD
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=40KB routing="trace:%inputs/speculate_routing.json"},convert-hyperoffload-to-linalg' --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// Lowered and run by the MLIR ExecutionEngine on random inputs (random
// routers' decisions), the planned step computes what the unplanned one does.
// RUN: hyperoffload-check %s --pipeline 'hyperoffload-pipeline{hbm-capacity=40KB routing="trace:%inputs/speculate_routing.json"}' --seed 1 -q | filecheck %s --check-prefix=EXEC
// RUN: hyperoffload-check %s --pipeline 'hyperoffload-pipeline{hbm-capacity=40KB routing="trace:%inputs/speculate_routing.json"}' --seed 2 -q | filecheck %s --check-prefix=EXEC
// EXEC: outputs match: yes (max |diff| = 0)

// Four experts, top-2; expert 0 is chosen by every token, 1 by three in
// five, 2 and 3 by one each. 40 KB (38.72 KB for experts) holds expert 0
// beside room for two fetches; expert 1 is fetched ahead of the router (at
// the entry of the step, the first MoE layer's), read in its branch, and
// detached after it, on both paths, before expert 2's branch can fetch.
// AHEAD: hyperoffload-pipeline: remark: @decode: 1 routed experts resident, 1 fetched ahead of their router, the rest in their branches
// AHEAD-LABEL: func.func @decode
// AHEAD-SAME:    %w0: tensor<64x64xf32> {{{.*}}hyperoffload.tier = #hyperoffload.tier<hbm>}
// AHEAD-SAME:    %w1: !hyperoffload.remote<tensor<64x64xf32>>
// AHEAD-NEXT:    %w1_1 = hyperoffload.prefetch %w1 {speculative} : !hyperoffload.remote<tensor<64x64xf32>> -> tensor<64x64xf32>
// AHEAD-NEXT:    %zero = arith.constant
// AHEAD:         %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
// AHEAD-NEXT:      %m1 = linalg.matmul ins(%a, %w1_1 : tensor<1x64xf32>, tensor<64x64xf32>)
// AHEAD-NEXT:      scf.yield %m1
// AHEAD:         }{hyperoffload.expert = array<i64: 0, 1>}
// AHEAD-NEXT:    hyperoffload.detach %w1_1 : tensor<64x64xf32>
// AHEAD-NEXT:    %s1 = arith.addf %s0, %y1
// AHEAD:         %y2 = scf.if %r2 -> (tensor<1x64xf32>) {
// AHEAD-NEXT:      %w2_1 = hyperoffload.prefetch %w2 : !hyperoffload.remote
// AHEAD:         %y3 = scf.if %r3 -> (tensor<1x64xf32>) {
// AHEAD-NEXT:      %w3_1 = hyperoffload.prefetch %w3 : !hyperoffload.remote
// Without speculation, expert 1 is fetched in its branch like the others.
// NOAHEAD: hyperoffload-pipeline: remark: @decode: 1 routed experts resident, 0 fetched ahead of their router, the rest in their branches
// NOAHEAD-LABEL: func.func @decode
// NOAHEAD-NOT:   speculative
// NOAHEAD:       %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
// NOAHEAD-NEXT:    %w1_1 = hyperoffload.prefetch %w1 : !hyperoffload.remote
// UPSTREAM-LABEL: func.func @decode
// UPSTREAM-NOT:   hyperoffload.prefetch
// UPSTREAM:       scf.if

func.func @decode(%x: tensor<1x64xf32>, %r0: i1, %r1: i1, %r2: i1, %r3: i1,
    %w0: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 0>, hyperoffload.tier = #hyperoffload.tier<remote>},
    %w1: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 1>, hyperoffload.tier = #hyperoffload.tier<remote>},
    %w2: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 2>, hyperoffload.tier = #hyperoffload.tier<remote>},
    %w3: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 3>, hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<1x64xf32> attributes {hyperoffload.moe = {experts = 4 : i64, top_k = 2 : i64, routed = true}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %a = arith.mulf %x, %x : tensor<1x64xf32>
  %y0 = scf.if %r0 -> (tensor<1x64xf32>) {
    %m0 = linalg.matmul ins(%a, %w0 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m0 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 0>}
  %s0 = arith.addf %a, %y0 : tensor<1x64xf32>
  %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
    %m1 = linalg.matmul ins(%a, %w1 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m1 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 1>}
  %s1 = arith.addf %s0, %y1 : tensor<1x64xf32>
  %y2 = scf.if %r2 -> (tensor<1x64xf32>) {
    %m2 = linalg.matmul ins(%a, %w2 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m2 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 2>}
  %s2 = arith.addf %s1, %y2 : tensor<1x64xf32>
  %y3 = scf.if %r3 -> (tensor<1x64xf32>) {
    %m3 = linalg.matmul ins(%a, %w3 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m3 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 3>}
  %s3 = arith.addf %s2, %y3 : tensor<1x64xf32>
  %out = arith.mulf %s3, %s3 : tensor<1x64xf32>
  func.return %out : tensor<1x64xf32>
}
