// f8E4M3FN takes a byte: the planner and the simulator size it, and the
// lowered program reads upstream; computing its values has no numpy type, a
// located diagnostic.
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=1MB},convert-hyperoffload-to-linalg' --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM
// RUN: hyperoffload-sim %s | filecheck %s --check-prefix=SIM
// RUN: not hyperoffload-sim %s --execute 2>&1 | filecheck %s

// UPSTREAM: arith.addf %{{.*}}, %{{.*}} : tensor<4xf8E4M3FN>
// SIM: peak HBM
// CHECK: unsupported-f8-execution.mlir:[[# @LINE + 2]]:1: error: argument #0: no numpy dtype for f8E4M3FN
// CHECK-NOT: Traceback
func.func @f(%a: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %r = arith.addf %a, %a : tensor<4xf8E4M3FN>
  func.return %r : tensor<4xf8E4M3FN>
}
