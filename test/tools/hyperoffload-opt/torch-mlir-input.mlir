// torch-mlir's linalg-on-tensors output as upstream prints it: named ops
// xDSL lacks (linalg.batch_matmul), dense_resource weights with their blobs.
// RUN: hyperoffload-opt %inputs/torch_attention.mlir | filecheck %s
// RUN: hyperoffload-opt %inputs/torch_attention.mlir --print-op-generic | mlir-opt | filecheck %s --check-prefix=UPSTREAM

// Both batch matmuls arrive generalised: four loops, one reduction.
// CHECK-LABEL: func.func @attention(%arg0: tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
// CHECK:         arith.constant dense_resource<torch_tensor_48_16_torch.float32> : tensor<48x16xf32>
// CHECK-COUNT-2: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-NOT:     linalg.batch_matmul
// The weight blobs survive.
// CHECK:       dialect_resources
// CHECK-NEXT:    builtin: {
// CHECK-NEXT:      torch_tensor_{{(16|48)}}_16_torch.float32: "0x04000000

// UPSTREAM-LABEL: func.func @attention
// UPSTREAM:       dense_resource<torch_tensor_16_16_torch.float32>
// UPSTREAM:       torch_tensor_16_16_torch.float32: "0x04000000
