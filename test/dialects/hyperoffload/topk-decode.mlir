// RUN: hyperoffload-opt %s --split-input-file | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file --print-op-generic | hyperoffload-opt --split-input-file | filecheck %s

// A top-k decode step (`hyperoffload-gen --attention topk`, docs/dialect.md,
// "Blocks chosen at run time"): the layer's keys sit in a pool of 8 blocks
// in the remote tier; the per-block key minimum and maximum are in HBM. The
// step bounds q.k for every block from the summaries, chooses its blocks
// (here a call: the selection is any computation on the scores), and reads
// them through a gather from the pool. The verifier proves every block the
// attention reads is resident: it reads only the gather's result.
//
// The first call of a generation has nothing fetched ahead: every chosen
// block is fetched on demand.

#q = affine_map<(j, h, d) -> (h, d)>
#blk = affine_map<(j, h, d) -> (j, h, d)>
#per_block = affine_map<(j, h, d) -> (j)>
func.func private @select_topk(tensor<8xf32>) -> tensor<2xi64>

// CHECK-LABEL: func.func @first_call
// CHECK:         %{{.*}} = linalg.generic
// CHECK:         %[[CHOSEN:.*]] = func.call @select_topk
// CHECK-NEXT:    %[[K:.*]] = hyperoffload.gather %k_pool[%[[CHOSEN]]] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
// CHECK:         linalg.generic {{.*}} ins(%q, %[[K]]
func.func @first_call(%q: tensor<2x16xf32>,
    %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>},
    %k_min: tensor<8x2x16xf32> {hyperoffload.category = "kv", hyperoffload.kv_summary = array<i64: 0, 0>},
    %k_max: tensor<8x2x16xf32> {hyperoffload.category = "kv", hyperoffload.kv_summary = array<i64: 0, 1>})
    -> tensor<2x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %bound = linalg.generic {indexing_maps = [#q, #blk, #blk, #per_block], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%q, %k_min, %k_max : tensor<2x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %lo: f32, %hi: f32, %acc: f32):
    %x = arith.mulf %a, %lo : f32
    %y = arith.mulf %a, %hi : f32
    %m = arith.maximumf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %chosen = func.call @select_topk(%bound) : (tensor<8xf32>) -> tensor<2xi64>
  %k = hyperoffload.gather %k_pool[%chosen] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
  %e2 = tensor.empty() : tensor<2x2x4xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %scores = linalg.generic {indexing_maps = [affine_map<(i, h, t, d) -> (h, d)>, affine_map<(i, h, t, d) -> (i, h, t, d)>, affine_map<(i, h, t, d) -> (i, h, t)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16xf32>, tensor<2x2x4x16xf32>) outs(%init2 : tensor<2x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x4xf32>
  hyperoffload.detach %k : tensor<2x2x4x16xf32>
  func.return %scores : tensor<2x2x4xf32>
}

// -----

// A later call: the blocks the previous call predicted were gathered ahead
// and passed in as resident blocks (%hot, with their indices %hot_ids, in
// HBM by the caller's contract). The chosen blocks found there are read in
// place, the others fetched on demand. The call then gathers, ahead, the
// blocks it predicts for the next call (from this call's scores): that copy
// overlaps the rest of the call, and its result is only returned.

func.func private @select_topk(tensor<8xf32>) -> tensor<2xi64>
func.func private @predict(tensor<8xf32>, tensor<2xi64>) -> tensor<2xi64>

// CHECK-LABEL: func.func @steady_call
// CHECK:         %[[K:.*]] = hyperoffload.gather %k_pool[%{{.*}}] resident %hot[%hot_ids] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64>, tensor<2x2x4x16xf32>, tensor<2xi64> -> tensor<2x2x4x16xf32>
// CHECK:         %[[NEXT:.*]] = hyperoffload.gather %k_pool[%[[IDS:.*]]] {ahead} : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
// CHECK:         func.return %{{.*}}, %[[NEXT]], %[[IDS]]
func.func @steady_call(%q: tensor<2x16xf32>,
    %k_pool: !hyperoffload.remote<tensor<8x2x4x16xf32>> {hyperoffload.category = "kv", hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.kv_pool = array<i64: 0, 0>},
    %bound: tensor<8xf32>, %hot: tensor<2x2x4x16xf32>, %hot_ids: tensor<2xi64>)
    -> (tensor<2x2x4xf32>, tensor<2x2x4x16xf32>, tensor<2xi64>) {
  %zero = arith.constant 0.0 : f32
  %chosen = func.call @select_topk(%bound) : (tensor<8xf32>) -> tensor<2xi64>
  %k = hyperoffload.gather %k_pool[%chosen] resident %hot[%hot_ids] : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64>, tensor<2x2x4x16xf32>, tensor<2xi64> -> tensor<2x2x4x16xf32>
  %predicted = func.call @predict(%bound, %chosen) : (tensor<8xf32>, tensor<2xi64>) -> tensor<2xi64>
  %next = hyperoffload.gather %k_pool[%predicted] {ahead} : !hyperoffload.remote<tensor<8x2x4x16xf32>>, tensor<2xi64> -> tensor<2x2x4x16xf32>
  %e2 = tensor.empty() : tensor<2x2x4xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %scores = linalg.generic {indexing_maps = [affine_map<(i, h, t, d) -> (h, d)>, affine_map<(i, h, t, d) -> (i, h, t, d)>, affine_map<(i, h, t, d) -> (i, h, t)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16xf32>, tensor<2x2x4x16xf32>) outs(%init2 : tensor<2x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x4xf32>
  hyperoffload.detach %k : tensor<2x2x4x16xf32>
  func.return %scores, %next, %predicted : tensor<2x2x4xf32>, tensor<2x2x4x16xf32>, tensor<2xi64>
}
