// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=16384 prefetch-distance=0}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=16384 prefetch-distance=0 detach=lazy}' | filecheck %s --check-prefix=LAZY
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hbm-capacity=16384 prefetch-distance=0}' | hyperoffload-sim /dev/stdin --hbm-capacity 16384 --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hardware="%inputs/round-host.toml" hbm-capacity=16384 prefetch-distance=0}' | filecheck %s --check-prefix=HOST
// RUN: hyperoffload-opt %s -p 'hyperoffload-insert{hardware="%inputs/round-host.toml" hbm-capacity=16384 prefetch-distance=0}' | hyperoffload-sim /dev/stdin --hardware %inputs/round-host.toml --hbm-capacity 16384 --json | filecheck %s --check-prefix=SIM

// Each tensor<1024xf32> is 4096 B. Unmodified, the peak is 20480 B at %b
// (x, h, f0, a, b). %h is produced in the "forward" part and read again at the
// end: stored after its producer, released after its last forward use,
// fetched back right before its next use. Then the peak is 16384 B. On
// ascend-910c its copy goes to the remote pool, the fastest tier: host
// memory's round trip (2 x 10 us of latency) would hide in its gap (three ops
// of 10 us launch overhead), but a fetch of 4 KB is latency, not bytes, and a
// latency-bound copy is sent to no slower tier (docs/passes.md, "Tiers").
// CHECK-LABEL: func.func @train
// CHECK-NEXT:    %h = arith.mulf %x, %x
// CHECK-NEXT:    %h_remote = hyperoffload.store %h : tensor<1024xf32> -> !hyperoffload.remote<tensor<1024xf32>>
// CHECK-NEXT:    %f0 = arith.addf %h, %x
// CHECK-NEXT:    hyperoffload.detach %h
// CHECK-NEXT:    %a = arith.addf %f0, %f0
// CHECK-NEXT:    %b = arith.mulf %f0, %f0
// CHECK-NEXT:    %c = arith.addf %a, %b
// CHECK-NEXT:    %h_1 = hyperoffload.prefetch %h_remote
// CHECK-NEXT:    %g = arith.mulf %c, %h_1
// CHECK-NEXT:    hyperoffload.detach %h_1
// CHECK-NEXT:    func.return %g

// detach=lazy: the device copy is released right before the fetch instead.
// LAZY:      %c = arith.addf %a, %b
// LAZY-NEXT: hyperoffload.detach %h
// LAZY-NEXT: %h_1 = hyperoffload.prefetch %h_remote

// Hardware with host memory and no remote pool (as the GPU presets): stores go
// to the host.
// HOST: %h_remote = hyperoffload.store %h : tensor<1024xf32> -> !hyperoffload.remote<tensor<1024xf32>, host>

// SIM: "peak_hbm_bytes": 16384,
// SIM: "oom": false,
func.func @train(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %h = arith.mulf %x, %x : tensor<1024xf32>
  %f0 = arith.addf %h, %x : tensor<1024xf32>
  %a = arith.addf %f0, %f0 : tensor<1024xf32>
  %b = arith.mulf %f0, %f0 : tensor<1024xf32>
  %c = arith.addf %a, %b : tensor<1024xf32>
  %g = arith.mulf %c, %h : tensor<1024xf32>
  func.return %g : tensor<1024xf32>
}
