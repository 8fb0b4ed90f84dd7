// RUN: hyperoffload-opt %s -t 'hyperoffload-schedule{hardware=ascend-910c}' | filecheck %s

// The store and prefetch become transfers on the remote link, the detach a
// free, and the first reader of the prefetched tensor waits for its transfer.
// CHECK:      "function": "offload"
// CHECK:      "name": "%x",
// CHECK-NEXT: "bytes": 1024,
// CHECK-NEXT: "tier": "hbm",
// CHECK-NEXT: "kind": "argument",
// CHECK:      "name": "%h",
// CHECK-NEXT: "bytes": 1024,
// CHECK-NEXT: "tier": "remote",
// CHECK-NEXT: "kind": "copy",
// CHECK:      "steps": [
// CHECK:        "name": "arith.mulf",
// CHECK:        "kind": "compute"
// CHECK:        "id": 0,
// CHECK-NEXT:   "source": 0,
// CHECK-NEXT:   "dest": 2,
// CHECK-NEXT:   "bytes": 1024,
// CHECK-NEXT:   "link": "remote",
// CHECK-NEXT:   "to_device": false,
// CHECK-NEXT:   "kind": "transfer"
// CHECK:        "buffer": 0,
// CHECK-NEXT:   "kind": "free"
// CHECK:        "to_device": true,
// CHECK-NEXT:   "kind": "transfer"
// CHECK:        "transfer": 1,
// CHECK-NEXT:   "kind": "wait"
// CHECK:        "name": "arith.addf",
func.func @offload(%x: tensor<256xf32>) -> tensor<256xf32> {
  %y = arith.mulf %x, %x : tensor<256xf32>
  %h = hyperoffload.store %x : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>>
  hyperoffload.detach %x : tensor<256xf32>
  %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
  %z = arith.addf %y, %xd : tensor<256xf32>
  func.return %z : tensor<256xf32>
}
