// The collectives of one device of an 8-way data-parallel group, priced on
// the device interconnect (ascend-910c: the unified bus, 196 GB/s each way,
// 5 us a ring step) and run on a stream of their own: the reduce-scatter of
// 8 MiB of f32 gradients takes 7 x (5 us + 1 MiB / 196 GB/s) = 72.4 us, the
// all-gather of 4 MiB of bf16 weights 53.7 us. The independent matmul after
// the reduce-scatter runs during it, the update waits for it: the step takes
// 173.0 us, less than its 65.0 us of compute and 126.2 us of collectives in
// turn. A hardware file without [interconnect] is a located error.
// RUN: hyperoffload-sim %s --hardware ascend-910c 2>/dev/null | filecheck %s
// RUN: hyperoffload-sim %s --hardware ascend-910c --trace %t.json 2>/dev/null > /dev/null
// RUN: filecheck %s --check-prefix=TRACE < %t.json
// RUN: not hyperoffload-sim %s --hardware gh200-c2c 2>&1 | filecheck %s --check-prefix=NONE

// CHECK:      policy  peak HBM  arena     makespan  compute  exposed
// CHECK-NEXT: plan    {{.*}}  173.0 us  65.0 us  108.0 us
// CHECK-NEXT: bounds: time >= 126.2 us (the busiest stream)
// CHECK-NEXT: interconnect: busy 126.2 us (11.01 MB sent each way, beside compute)

// TRACE-DAG: "name": "hyperoffload.reduce_scatter", {{.*}}"dur": 72.449{{[0-9]*}}, "args": {"bytes": 7340032}
// TRACE-DAG: "name": "hyperoffload.all_gather", {{.*}}"dur": 53.724{{[0-9]*}}, "args": {"bytes": 3670016}

// NONE: collectives.mlir:[[# @LINE + 14]]:3: error: 'hyperoffload.reduce_scatter' runs on the device interconnect, which hardware 'gh200-c2c' does not describe (give it an [interconnect] table)
// NONE-NOT: Traceback

#map = affine_map<(d0, d1) -> (d0, d1)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @step(%g0: tensor<2048x1024xf32>, %x: tensor<1024x1024xbf16>, %m: tensor<256x1024xf32>) -> (tensor<2048x1024xbf16>, tensor<256x1024xf32>, tensor<1024x1024xf32>) {
  %e = tensor.empty() : tensor<2048x1024xf32>
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%g0 : tensor<2048x1024xf32>) outs(%e : tensor<2048x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2048x1024xf32>
  %gs = hyperoffload.reduce_scatter %g {group = 8 : i64, rank = 0 : i64} : tensor<2048x1024xf32> -> tensor<256x1024xf32>
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<1024x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ea : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %mm = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %x : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) outs(%acc : tensor<1024x1024xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %p = arith.mulf %a, %b : bf16
    %pe = arith.extf %p : bf16 to f32
    %s = arith.addf %c, %pe : f32
    linalg.yield %s : f32
  } -> tensor<1024x1024xf32>
  %e2 = tensor.empty() : tensor<256x1024xf32>
  %m2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %gs : tensor<256x1024xf32>, tensor<256x1024xf32>) outs(%e2 : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<256x1024xf32>
  %e3 = tensor.empty() : tensor<256x1024xbf16>
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%m2 : tensor<256x1024xf32>) outs(%e3 : tensor<256x1024xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x1024xbf16>
  %wf = hyperoffload.all_gather %w {group = 8 : i64, rank = 0 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
  func.return %wf, %m2, %mm : tensor<2048x1024xbf16>, tensor<256x1024xf32>, tensor<1024x1024xf32>
}
