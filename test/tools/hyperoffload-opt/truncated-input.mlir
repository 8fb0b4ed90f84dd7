// A torch-mlir file cut short trips an assertion in the upstream parser,
// which aborts the process parsing it: that process is a child, and the tool
// reports the abort where the input ends, with exit status 1.
// RUN: head -c 8000 %inputs/torch_attention.mlir > %t.mlir
// RUN: not hyperoffload-opt %t.mlir 2>&1 | filecheck %s
// RUN: not hyperoffload-sim %t.mlir 2>&1 | filecheck %s

// CHECK: .mlir:106:187: error: upstream MLIR aborted parsing this input at its end (is it cut short?)
// CHECK-NOT: Traceback
