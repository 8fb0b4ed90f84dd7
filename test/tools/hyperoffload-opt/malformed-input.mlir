// RUN: not hyperoffload-opt %s 2> %t.err
// RUN: filecheck %s < %t.err
// RUN: not grep -q Traceback %t.err

// CHECK: malformed-input.mlir:9:19: error: use of value '%x' expects different type than prior uses: 'i32' vs 'tensor<4xf32>'
// CHECK-NEXT: {{^}}  %y = arith.addi %x, %x : i32

func.func @f(%x: tensor<4xf32>) {
  %y = arith.addi %x, %x : i32
  func.return
}
