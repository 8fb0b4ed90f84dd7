// The generation simulator honours the compression the plan wrote into the
// IR: test/inputs/window_decode.mlir (blocks of 32 f32, 128 B) planned with
// compress-kv=int8 carries compress = "int8" on every block's prefetch and
// every new entry's store, and `--generate` moves the blocks compressed
// (32 int8 + one f16 scale: 34 B) without being told. FlexGen's schedule
// streams 46 blocks into HBM over 8 calls: 46 x 34 = 1564 B, against
// 46 x 128 = 5888 B for the same step planned without compression.
// RUN: hyperoffload-opt %inputs/window_decode.mlir -p 'hyperoffload-pipeline{compress-kv=int8 hardware="%inputs/round.toml" hbm-capacity=600}' 2>/dev/null \
// RUN:   | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --generate 8 --policy flexgen --hbm-capacity 1000 --json 2>&1 | filecheck %s
// RUN: hyperoffload-opt %inputs/window_decode.mlir -p 'hyperoffload-pipeline{hardware="%inputs/round.toml" hbm-capacity=600}' 2>/dev/null \
// RUN:   | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --generate 8 --policy flexgen --hbm-capacity 1000 --json 2>&1 | filecheck %s --check-prefix=PLAIN
// `--compress-kv` is a `--generate` option: elsewhere it is an error.
// RUN: not hyperoffload-sim %inputs/window_decode.mlir --hardware %inputs/round.toml --compress-kv int8 2>&1 | filecheck %s --check-prefix=ERR

// CHECK: remark: the plan moves KV blocks compressed (int8)
// CHECK: "policy": "flexgen"
// CHECK: "bytes_to_device": 1564,

// PLAIN-NOT: compressed
// PLAIN: "policy": "flexgen"
// PLAIN: "bytes_to_device": 5888,

// ERR: hyperoffload-sim: error: --compress-kv applies to --generate on a decode step in blocks
