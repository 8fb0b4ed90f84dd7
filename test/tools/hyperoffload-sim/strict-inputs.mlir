// Hardware files and schedules are read strictly: an unknown key names the
// nearest known one with its file and line, a bandwidth needs its unit, and
// a schedule's unknown compression scheme is an error at its step; each is a
// located diagnostic with exit status 1 and nothing on stdout.
// RUN: not hyperoffload-sim %s --hardware %inputs/strict/unknown-key.toml 2>&1 | filecheck %s --check-prefix=KEY
// RUN: not hyperoffload-sim %s --hardware %inputs/strict/bare-bandwidth.toml 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/strict/bare-bandwidth.toml"}' 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not hyperoffload-sim %inputs/strict/zstd-schedule.json --json 2>&1 | filecheck %s --check-prefix=ZSTD

// KEY: strict/unknown-key.toml:18: error: unknown key 'tiers.remote.latncy' (did you mean 'latency'?)
// KEY-NOT: Traceback
// BARE: strict/bare-bandwidth.toml: error: malformed hardware file: [device] hbm_bandwidth: invalid rate 10: 10 what? write 10GB/s or 10B/s (a rate needs a unit)
// BARE-NOT: Traceback
// ZSTD: strict/zstd-schedule.json: error: malformed schedule: steps[{{[0-9]+}}]: 'compress' must be "int8" or null, not "zstd"
// ZSTD-NOT: {
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
