// `--generate` on a top-k decode step replays recorded block rankings
// (docs/simulator.md, "Top-k decode"). test/inputs/topk_decode.mlir: one
// layer, 3 blocks of 4 positions (256 B of keys, 256 B of values: 512 B a
// block), block 2 fixed, blocks 0 and 1 the candidates, K = 1. The rankings
// (test/inputs/topk_selections.json) select blocks 1, 0, 1.
//
// On test/inputs/round.toml (100 MB/s link, 1 GB/s HBM) a block takes
// 5.12 us to fetch; a call computes 0.512 us and writes back its 128 B of
// new entries in 1.28 us, so 0.768 us of each write-back is exposed.
// With 2 hot blocks ours fetches blocks 1 and 0 on demand (nothing fits
// ahead in 0.512 us of compute) and finds block 1 resident in the third
// call: hit rate 1/3, exposed 2 x 5.12 + 3 x 0.768 = 12.544 us, bytes per
// token (2 x 512 + 3 x 128) / 3.
// RUN: hyperoffload-sim %inputs/topk_decode.mlir --hardware %inputs/round.toml --generate 3 \
// RUN:   --selections %inputs/topk_selections.json --policy all --hot-blocks 2 --json 2>/dev/null | filecheck %s
// RUN: not hyperoffload-sim %inputs/topk_decode.mlir --generate 3 2>&1 | filecheck %s --check-prefix=NOSEL
// RUN: not hyperoffload-sim %inputs/window_decode.mlir --generate 3 --selections %inputs/topk_selections.json 2>&1 | filecheck %s --check-prefix=NOTOPK

// CHECK:      "policy": "none",
// CHECK:      "hit_rate": 1.0,
// CHECK:      "exposed_s": 2.304e-06,
// CHECK:      "kv_hbm_bytes": 1536,
// CHECK:      "policy": "plan",
// CHECK-NEXT: "tokens": 3,
// CHECK-NEXT: "hot_blocks": 2,
// CHECK-NEXT: "hit_rate": 0.3333333333333333,
// CHECK-NEXT: "on_demand_per_token": 0.6666666666666666,
// CHECK-NEXT: "ahead_per_token": 0.0,
// CHECK-NEXT: "exposed_s": 1.2544e-05,
// CHECK:      "bytes_per_token": 469.3333333333333,
// CHECK:      "policy": "on-demand",

// NOSEL: error: --generate on a top-k decode step needs --selections FILE
// NOTOPK: error: --selections and --hot-blocks need a top-k decode step
