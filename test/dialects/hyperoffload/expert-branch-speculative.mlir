// A speculative prefetch (docs/dialect.md, "Conditional regions (experts)"):
// the cold expert's weights are prefetched above the scf.if, ahead of the
// router's decision, with `speculative` (their data may go unused: the hot
// branch never reads them), and detached after the scf.if, on both paths.
// The unit attribute prints in the attribute dictionary, round-trips in both
// forms, and upstream mlir-opt (the dialect loaded from its IRDL export)
// keeps it as a discardable attribute.
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | grep -v ': error: ' | hyperoffload-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics --print-op-generic | grep -v ': error: ' | tee %t.generic | hyperoffload-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: filecheck %s --check-prefix=GENERIC < %t.generic
// RUN: mlir-opt %t.generic --split-input-file --irdl-file=%irdl --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @speculative_cold_expert
// CHECK:         %wd = hyperoffload.prefetch %w_cold {speculative} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
// CHECK-NEXT:    %y = scf.if %routed -> (tensor<2x4xf32>) {
// CHECK-NEXT:      %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:      scf.yield %hot : tensor<2x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:      scf.yield %cold : tensor<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    hyperoffload.detach %wd : tensor<4x4xf32>
// CHECK-NEXT:    %r = arith.addf %x, %y : tensor<2x4xf32>
// ROUND-LABEL: func.func @speculative_cold_expert
// ROUND:         hyperoffload.prefetch %{{.*}} {speculative} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
// ROUND-NEXT:    scf.if
// ROUND:         } else {
// ROUND-NEXT:      linalg.matmul
// ROUND:         }
// ROUND-NEXT:    hyperoffload.detach %{{.*}} : tensor<4x4xf32>
// GENERIC-LABEL: sym_name = "speculative_cold_expert"
// GENERIC:         "hyperoffload.prefetch"(%{{.*}}) {speculative} : (!hyperoffload.remote<tensor<4x4xf32>, #hyperoffload.tier<"remote">>) -> tensor<4x4xf32>
// GENERIC:         "scf.if"
// GENERIC:         "hyperoffload.detach"
func.func @speculative_cold_expert(%x: tensor<2x4xf32>, %routed: i1, %w_hot: tensor<4x4xf32>,
                                   %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %wd = hyperoffload.prefetch %w_cold {speculative} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>
  %y = scf.if %routed -> (tensor<2x4xf32>) {
    %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %hot : tensor<2x4xf32>
  } else {
    %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %cold : tensor<2x4xf32>
  }
  hyperoffload.detach %wd : tensor<4x4xf32>
  %r = arith.addf %x, %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// With compress, the two attributes share the dictionary.
// CHECK-LABEL: func.func @speculative_and_compressed
// CHECK:         hyperoffload.prefetch %w {compress = "int8", speculative} : !hyperoffload.remote<tensor<2x64xf32>> -> tensor<2x64xf32>
// ROUND-LABEL: func.func @speculative_and_compressed
// ROUND:         hyperoffload.prefetch %{{.*}} {compress = "int8", speculative}
// GENERIC-LABEL: sym_name = "speculative_and_compressed"
// GENERIC:         "hyperoffload.prefetch"(%{{.*}}) {compress = "int8", speculative}
func.func @speculative_and_compressed(%routed: i1, %w: !hyperoffload.remote<tensor<2x64xf32>>) {
  %wd = hyperoffload.prefetch %w {compress = "int8", speculative} : !hyperoffload.remote<tensor<2x64xf32>> -> tensor<2x64xf32>
  scf.if %routed {
    %s = arith.addf %wd, %wd : tensor<2x64xf32>
    scf.yield
  }
  hyperoffload.detach %wd : tensor<2x64xf32>
  func.return
}

// -----

// A speculative prefetch inside the branch it anticipates: the decision is
// taken, nothing is speculated.
func.func @inside_its_branch(%routed: i1, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %y = scf.if %routed -> (tensor<4xf32>) {
    %wd = hyperoffload.prefetch %w {speculative} : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
    %a = arith.addf %wd, %wd : tensor<4xf32>
    hyperoffload.detach %wd : tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK: expert-branch-speculative.mlir:[[# @LINE - 10]]:5: error: speculative prefetch %wd is read unconditionally by 'arith.addf': a speculative prefetch is issued ahead of a branch's decision, so its readers must sit inside an scf.if (or scf.index_switch) below it; hoist it above the branch it anticipates or drop 'speculative'

// -----

// A reader after the scf.if makes the data used on every path.
func.func @read_on_every_path(%routed: i1, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %wd = hyperoffload.prefetch %w {speculative} : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  scf.if %routed {
    %a = arith.addf %wd, %wd : tensor<4xf32>
    scf.yield
  }
  %b = arith.mulf %wd, %wd : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
// CHECK: expert-branch-speculative.mlir:[[# @LINE - 8]]:3: error: speculative prefetch %wd is read unconditionally by 'arith.mulf'

// -----

// `speculative` is a unit attribute.
func.func @not_a_unit(%w: !hyperoffload.remote<tensor<4xf32>>, %routed: i1) {
  %wd = hyperoffload.prefetch %w {speculative = true} : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  scf.if %routed {
    %a = arith.addf %wd, %wd : tensor<4xf32>
    scf.yield
  }
  func.return
}
// CHECK: expert-branch-speculative.mlir:[[# @LINE - 7]]:3: error: 'hyperoffload.prefetch': true should be of base attribute unit
