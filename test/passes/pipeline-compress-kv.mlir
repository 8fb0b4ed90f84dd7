// compress-kv=int8: every move of KV state is compressed (per-row INT8 with
// f16 scales), and the plan is priced with the compressed bytes and the codec.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{compress-kv=int8 hardware="%inputs/round.toml"}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml"}' | filecheck %s --check-prefix=PLAIN
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{compress-kv=int8 hardware="%inputs/round.toml"}' \
// RUN:   | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hardware="%inputs/round.toml"}' \
// RUN:   | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --json | filecheck %s --check-prefix=PLAINSIM

// A decode step on test/inputs/round.toml (1 GB/s HBM, 1 GFLOP/s, 100 MB/s
// link, no latency or overhead): the KV block %k (64x256 bf16, 32768 B)
// lives in the pool and is read by the last op; %kn, the token's new entry
// (1x256 bf16), is written back to the pool (a KV result: the function takes
// KV arguments).
//
// Op times (bytes at 1 GB/s): %kn 1.024 us, %a1..%a4 65.536 us each, %r
// 98.304 us; %r starts 263.168 us into the step.
//
// Without compression the fetch of %k takes 32768 B / 100 MB/s = 327.68 us,
// more than the 263.168 us of compute before %r: it is issued at entry and
// 64.512 us of it stay exposed (makespan 425.984 us).
//
// Compressed, %k crosses the link as 64x256 int8 + 64 f16 scales = 16512 B
// (half, plus the scales): 165.12 us, and its dequantisation reads 16512 B
// and writes 32768 B on the device, 49.28 us; priced at 214.4 us, the fetch
// is placed just in time, after the first op (263.168 - 214.4 = 48.768 us,
// the last op boundary before that is 1.024 us), and hides: nothing is
// exposed. The store of %kn quantises (512 + 258 B: 0.77 us) and moves 258 B.
// The step takes 1.024 + 0.77 + 4 x 65.536 + 49.28 + 98.304 = 411.522 us,
// all of it compute.
// CHECK-LABEL: func.func @decode
// CHECK-SAME:    %k: !hyperoffload.remote<tensor<64x256xbf16>> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}
// CHECK-NEXT:    %kn = arith.mulf %s, %s
// CHECK-NEXT:    %kn_remote = hyperoffload.store %kn {compress = "int8"} : tensor<1x256xbf16> -> !hyperoffload.remote<tensor<1x256xbf16>>
// CHECK-NEXT:    hyperoffload.detach %kn
// CHECK-NEXT:    %k_1 = hyperoffload.prefetch %k {compress = "int8"} : !hyperoffload.remote<tensor<64x256xbf16>> -> tensor<64x256xbf16>
// CHECK-NEXT:    %a1 = arith.mulf %x, %x
// CHECK:         %r = arith.mulf %a4, %k_1
// CHECK-NEXT:    hyperoffload.detach %k_1
// CHECK-NEXT:    func.return %r, %kn_remote

// PLAIN-LABEL: func.func @decode
// PLAIN-NEXT:    %k_1 = hyperoffload.prefetch %k : !hyperoffload.remote<tensor<64x256xbf16>> -> tensor<64x256xbf16>
// PLAIN-NEXT:    %kn = arith.mulf %s, %s
// PLAIN-NEXT:    %kn_remote = hyperoffload.store %kn : tensor<1x256xbf16>
// PLAIN-NOT:     compress

// SIM:      "makespan_s": 0.000411522
// SIM:      "exposed_transfer_s": 0.0,
// SIM-NEXT: "bytes_to_device": 16512,
// SIM-NEXT: "bytes_to_remote": 258,

// PLAINSIM:      "makespan_s": 0.000425984,
// PLAINSIM:      "exposed_transfer_s": 6.4512{{[0-9]*}}e-05,
// PLAINSIM-NEXT: "bytes_to_device": 32768,
// PLAINSIM-NEXT: "bytes_to_remote": 512,
func.func @decode(%s: tensor<1x256xbf16>, %x: tensor<64x256xbf16>,
                  %k: tensor<64x256xbf16> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"})
    -> (tensor<64x256xbf16>, tensor<1x256xbf16> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %kn = arith.mulf %s, %s : tensor<1x256xbf16>
  %a1 = arith.mulf %x, %x : tensor<64x256xbf16>
  %a2 = arith.mulf %a1, %a1 : tensor<64x256xbf16>
  %a3 = arith.mulf %a2, %a2 : tensor<64x256xbf16>
  %a4 = arith.mulf %a3, %a3 : tensor<64x256xbf16>
  %r = arith.mulf %a4, %k : tensor<64x256xbf16>
  func.return %r, %kn : tensor<64x256xbf16>, tensor<1x256xbf16>
}
