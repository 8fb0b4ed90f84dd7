// Expert parallelism's all-to-all (hyperoffload-gen --expert-shard N)
// lowered to its single-process semantics: the other devices are replicas
// of this one, so every chunk of the result is the operand's chunk `rank`.
// Priced as the ring collectives: over 4 devices on ascend-910c each sends
// 3/4 of 512 KiB, 3 x (5 us + 128 KiB / 196 GB/s) = 17.0 us.
// RUN: hyperoffload-opt %s -p convert-hyperoffload-to-linalg | filecheck %s
// RUN: hyperoffload-sim %s --hardware ascend-910c --trace %t.json 2>/dev/null > /dev/null
// RUN: filecheck %s --check-prefix=TRACE < %t.json

// CHECK-LABEL: func.func @dispatch
// CHECK-NEXT:    %[[CHUNK:.*]] = tensor.extract_slice %x[4, 0, 0] [4, 32, 256] [1, 1, 1] : tensor<16x32x256xf32> to tensor<4x32x256xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<16x32x256xf32>
// CHECK-NEXT:    %[[R0:.*]] = tensor.insert_slice %[[CHUNK]] into %[[E]][0, 0, 0] [4, 32, 256] [1, 1, 1]
// CHECK-NEXT:    %[[R1:.*]] = tensor.insert_slice %[[CHUNK]] into %[[R0]][4, 0, 0] [4, 32, 256] [1, 1, 1]
// CHECK-NEXT:    %[[R2:.*]] = tensor.insert_slice %[[CHUNK]] into %[[R1]][8, 0, 0] [4, 32, 256] [1, 1, 1]
// CHECK-NEXT:    %[[R3:.*]] = tensor.insert_slice %[[CHUNK]] into %[[R2]][12, 0, 0] [4, 32, 256] [1, 1, 1]
// CHECK-NEXT:    func.return %[[R3]]
// CHECK-NOT:   hyperoffload.

// TRACE: "name": "hyperoffload.all_to_all", {{.*}}"dur": 17.0{{[0-9]*}}, "args": {"bytes": 393216}

func.func @dispatch(%x: tensor<16x32x256xf32>) -> tensor<16x32x256xf32> {
  %r = hyperoffload.all_to_all %x {group = 4 : i64, rank = 1 : i64} : tensor<16x32x256xf32> -> tensor<16x32x256xf32>
  func.return %r : tensor<16x32x256xf32>
}

