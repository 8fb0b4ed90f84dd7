// A module with no function, one whose functions have no body, and an empty
// file: the simulator says so at the input's first line; the checker at the
// input; the planner has nothing to plan and leaves the module as it is.
// RUN: not hyperoffload-sim %s 2>&1 | filecheck %s
// RUN: not hyperoffload-check %s 2>&1 | filecheck %s --check-prefix=CHECKER
// RUN: hyperoffload-opt %s -p 'hyperoffload-pipeline{hbm-capacity=1MB}' | filecheck %s --check-prefix=PLAN
// RUN: sed -n 's|^// \(func.func private .*\)|\1|p' %s > %t.declaration.mlir
// RUN: not hyperoffload-sim %t.declaration.mlir 2>&1 | filecheck %s --check-prefix=DECLARATION
// RUN: printf '' > %t.empty.mlir
// RUN: not hyperoffload-sim %t.empty.mlir 2>&1 | filecheck %s --check-prefix=EMPTY

// CHECK: no-function.mlir:[[# @LINE + 6]]:1: error: no public function with a body
// CHECK-NOT: Traceback
// CHECKER: no-function.mlir: error: no public function with a body to check
// PLAN: builtin.module
// DECLARATION: .declaration.mlir:1:1: error: no public function with a body
// EMPTY: .empty.mlir:1:1: error: no public function with a body
module {
}
// (a declaration, for the second input:)
// func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32>
