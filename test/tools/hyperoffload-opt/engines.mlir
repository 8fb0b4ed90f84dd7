// The two engines: upstream MLIR's parser (C++) or xDSL's, chosen by
// `--engine` (auto: upstream's from 256 KiB of text). Both read this program
// alike; upstream's parser keeps no value names, so its output names values
// as mlir-opt prints them. Ops of our dialect in custom form are xDSL's alone.
// RUN: hyperoffload-opt %s --engine xdsl | filecheck %s --check-prefix=XDSL
// RUN: hyperoffload-opt %s --engine upstream | filecheck %s --check-prefix=UPSTREAM
// RUN: hyperoffload-opt %s --engine upstream | hyperoffload-opt --engine xdsl | filecheck %s --check-prefix=UPSTREAM
// RUN: not hyperoffload-opt %S/../../../examples/offload_mlp.mlir --engine upstream 2>&1 | filecheck %s --check-prefix=OURS
// RUN: not hyperoffload-opt %s --engine fast 2>&1 | filecheck %s --check-prefix=CHOICE

func.func @f(%x: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %y = arith.addf %x, %z : tensor<4xf32>
  return %y : tensor<4xf32>
}

// XDSL:      func.func @f(%x: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<4xf32> {
// XDSL-NEXT:   %zero = arith.constant 0.000000e+00 : f32
// XDSL-NEXT:   %e = tensor.empty() : tensor<4xf32>
// XDSL-NEXT:   %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
// XDSL-NEXT:   %y = arith.addf %x, %z : tensor<4xf32>

// UPSTREAM:      func.func @f(%arg0: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<4xf32> {
// UPSTREAM-NEXT:   %cst = arith.constant 0.000000e+00 : f32
// UPSTREAM-NEXT:   %0 = tensor.empty() : tensor<4xf32>
// UPSTREAM-NEXT:   %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
// UPSTREAM-NEXT:   %2 = arith.addf %arg0, %1 : tensor<4xf32>

// OURS: offload_mlp.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// OURS: note: the upstream engine reads ops and types of hyperoffload in generic form only (`--engine xdsl` reads their custom form)

// CHOICE: argument --engine: invalid choice: 'fast'
