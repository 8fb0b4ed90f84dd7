// A tensor whose byte size overflows 64 bits is beyond what the tools
// support: a located diagnostic that says so, from the planner and the
// simulator alike.
// RUN: not hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=1MB}' 2>&1 | filecheck %s
// RUN: not hyperoffload-sim %s 2>&1 | filecheck %s

// CHECK: unsupported-size-overflow.mlir:[[# @LINE + 2]]:1: error: cannot size tensor<4294967296x4294967296xf32> of 'func.func': its size, 73786976294838206464 B, overflows 64 bits (not supported)
// CHECK-NOT: Traceback
func.func @f(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %r = arith.addf %a, %a : tensor<4294967296x4294967296xf32>
  func.return %r : tensor<4294967296x4294967296xf32>
}
