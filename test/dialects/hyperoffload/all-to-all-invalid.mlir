// An all-to-all splits its operand's first dimension in `group` chunks.
// RUN: not hyperoffload-opt %s 2>&1 | filecheck %s

// CHECK: 'hyperoffload.all_to_all': tensor<16x8xf32> does not split in 3 chunks along its first dimension
func.func @uneven(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = hyperoffload.all_to_all %x {group = 3 : i64, rank = 0 : i64} : tensor<16x8xf32> -> tensor<16x8xf32>
  func.return %r : tensor<16x8xf32>
}
