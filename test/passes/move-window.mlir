// Hardware with round figures (test/inputs/round.toml): HBM 1 GB/s, 1 GFLOP/s,
// no per-op overhead, a 100 MB/s link. A tensor<256xf32> is 1024 B: fetching
// one takes 10.24 us; an op with one distinct 1024 B input takes 2.048 us, one
// with two takes 3.072 us. Op start times: a0 0, a1 2.048, b 4.096, c 6.144,
// a4 9.216, a5 11.264, r 13.312 us.
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml"}' | filecheck %s
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" hbm-capacity=4096}' | filecheck %s --check-prefix=TARGET
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" beta=0}' | filecheck %s --check-prefix=LEAST
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml"}' | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --json | filecheck %s --check-prefix=SIM
// RUN: hyperoffload-opt %s -p 'hyperoffload-move-window{hardware="%inputs/round.toml" hbm-capacity=4096}' | hyperoffload-sim /dev/stdin --hardware %inputs/round.toml --hbm-capacity 4096 --json | filecheck %s --check-prefix=SIMTARGET

// The fetch must start 10.24 us before r starts (13.312 us), at 3.072 us:
// the latest op boundary at or before it is the start of a1, so the prefetch
// moves up five ops. The detach moves up to right after its last use.
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %a0 = arith.addf %x, %x
// CHECK-NEXT:    %wd = hyperoffload.prefetch %w
// CHECK-NEXT:    %a1 = arith.mulf %a0, %a0
// CHECK-NEXT:    %b = arith.mulf %a1, %a1
// CHECK-NEXT:    %c = arith.addf %a1, %b
// CHECK-NEXT:    %a4 = arith.mulf %c, %c
// CHECK-NEXT:    %a5 = arith.mulf %a4, %a4
// CHECK-NEXT:    %r = arith.mulf %a5, %wd
// CHECK-NEXT:    hyperoffload.detach %wd
// CHECK-NEXT:    %s = arith.addf %r, %r
// CHECK-NEXT:    func.return %s

// With a 4096 B target the copy cannot be resident while c runs (x, a1, b, c
// already hold 4096 B): it is issued right after c instead.
// TARGET-LABEL: func.func @f
// TARGET:         %c = arith.addf %a1, %b
// TARGET-NEXT:    %wd = hyperoffload.prefetch %w
// TARGET-NEXT:    %a4 = arith.mulf %c, %c

// Moved up: nothing exposed, but the peak is 5120 B (x, a1, b, c, wd at c).
// SIM: "peak_hbm_bytes": 5120,
// SIM: "exposed_transfer_s": 0.0,
// Within the target: the peak stays at 4096 B; the fetch starts at 9.216 us and
// ends at 19.456 us, so r waits 6.144 us (the input exposed all 10.24 us).
// SIMTARGET: "peak_hbm_bytes": 4096,
// SIMTARGET: "exposed_transfer_s": 6.144{{[0-9]*}}e-06,
func.func @f(%x: tensor<256xf32>, %w: !hyperoffload.remote<tensor<256xf32>>) -> tensor<256xf32> {
  %a0 = arith.addf %x, %x : tensor<256xf32>
  %a1 = arith.mulf %a0, %a0 : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %a1, %b : tensor<256xf32>
  %a4 = arith.mulf %c, %c : tensor<256xf32>
  %a5 = arith.mulf %a4, %a4 : tensor<256xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %r = arith.mulf %a5, %wd : tensor<256xf32>
  %s = arith.addf %r, %r : tensor<256xf32>
  hyperoffload.detach %wd : tensor<256xf32>
  func.return %s : tensor<256xf32>
}

// A prefetch never moves above the store whose copy it reads: the fetch of
// %h would need 10.24 us before %d, more than the compute after the store.
// With memory weighed (the default), moving it up to the store hides no
// more (the copy exists only once the store ends) and would raise the peak
// to 5120 B: the input order stays. With beta=0 (least exposure, memory
// carries no weight) it stays too: its window opens once the copy it
// replaces is released, after %b's read and the store's end (right after
// the store, both copies held 5120 B, above the 4096 B of the program that
// moves nothing).
// CHECK-LABEL: func.func @g
// CHECK-NEXT:    %h = arith.addf %x, %x
// CHECK-NEXT:    %hs = hyperoffload.store %h
// CHECK-NEXT:    %b = arith.mulf %h, %h
// CHECK-NEXT:    hyperoffload.detach %h
// CHECK-NEXT:    %c = arith.mulf %b, %b
// CHECK-NEXT:    %hd = hyperoffload.prefetch %hs
// CHECK-NEXT:    %d = arith.mulf %c, %hd
// CHECK-NEXT:    func.return %d
// LEAST-LABEL: func.func @g
// LEAST-NEXT:    %h = arith.addf %x, %x
// LEAST-NEXT:    %hs = hyperoffload.store %h
// LEAST-NEXT:    %b = arith.mulf %h, %h
// LEAST-NEXT:    hyperoffload.detach %h
// LEAST-NEXT:    %c = arith.mulf %b, %b
// LEAST-NEXT:    %hd = hyperoffload.prefetch %hs
func.func @g(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.addf %x, %x : tensor<256xf32>
  %hs = hyperoffload.store %h : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>>
  %b = arith.mulf %h, %h : tensor<256xf32>
  hyperoffload.detach %h : tensor<256xf32>
  %c = arith.mulf %b, %b : tensor<256xf32>
  %hd = hyperoffload.prefetch %hs : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %d = arith.mulf %c, %hd : tensor<256xf32>
  func.return %d : tensor<256xf32>
}
