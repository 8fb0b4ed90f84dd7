// RUN: hyperoffload-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A compute op reading a remote argument.
#id = affine_map<(d0) -> (d0)>
func.func @compute_reads_remote_argument(%w: !hyperoffload.remote<tensor<4xf32>>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%w : !hyperoffload.remote<tensor<4xf32>>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return
}
// CHECK: invalid.mlir:7:3: error: 'linalg.generic' reads %w, a remote copy (!hyperoffload.remote<tensor<4xf32>>); compute reads only device-resident tensors, prefetch it first

// -----

// A compute op reading the handle a store returned.
func.func @compute_reads_store_handle(%x: tensor<4xf32>) {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  %c = func.call @consume(%h) : (!hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%h : !hyperoffload.remote<tensor<4xf32>>) outs(%c : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return
}
func.func private @consume(!hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32>
// CHECK: invalid.mlir:22:3: error: 'linalg.generic' reads %h, a remote copy

// -----

// Using a tensor after its detach, although a store persisted it.
func.func @use_after_detach(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: invalid.mlir:38:3: error: %x is used after its detach; read a prefetch of its stored copy instead

// -----

// Detaching data that is still needed and that no store persisted.
func.func @detach_live_unpersisted(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  hyperoffload.detach %y : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: invalid.mlir:48:3: error: detach of live data that no store has persisted: %y is still used by 'func.return' after it

// -----

// A store after the detach does not persist anything.
func.func @store_after_detach(%x: tensor<4xf32>) {
  hyperoffload.detach %x : tensor<4xf32>
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  func.return
}
// CHECK: invalid.mlir:57:3: error: detach of live data that no store has persisted: %x is still used by 'hyperoffload.store' after it

// -----

// A use inside the region of a later op is a use after the detach.
func.func @use_in_later_region(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  hyperoffload.detach %x : tensor<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %y = arith.addf %x, %x : tensor<4xf32>
  }
  func.return
}
// CHECK: invalid.mlir:69:3: error: detach of live data that no store has persisted: %x is still used by 'arith.addf' after it

// -----

// Detaching inside a loop a tensor defined outside it.
func.func @detach_in_loop(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    hyperoffload.detach %x : tensor<4xf32>
  }
  func.return
}
// CHECK: invalid.mlir:84:5: error: 'hyperoffload.detach': detach must be in the block that defines its operand

// -----

// Prefetching something that is not a remote copy.
func.func @prefetch_of_tensor(%x: tensor<4xf32>) {
  %y = hyperoffload.prefetch %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: invalid.mlir:94:3: error: 'hyperoffload.prefetch': prefetch reads a remote copy (!hyperoffload.remote<...>), got tensor<4xf32>

// -----

// A prefetch whose result type differs from the copy it reads.
func.func @prefetch_wrong_type(%w: !hyperoffload.remote<tensor<4xf32>>) {
  %y = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<8xf32>
  func.return
}
// CHECK: invalid.mlir:103:3: error: 'hyperoffload.prefetch': prefetch result type tensor<8xf32> does not match the remote copy's tensor type tensor<4xf32>

// -----

// Storing a remote copy again.
func.func @store_of_remote(%w: !hyperoffload.remote<tensor<4xf32>>) {
  %h = hyperoffload.store %w : !hyperoffload.remote<tensor<4xf32>> -> !hyperoffload.remote<tensor<4xf32>>
  func.return
}
// CHECK: invalid.mlir:112:3: error: 'hyperoffload.store': store copies a device tensor, got !hyperoffload.remote<tensor<4xf32>>

// -----

// Detaching a remote copy.
func.func @detach_of_remote(%w: !hyperoffload.remote<tensor<4xf32>>) {
  hyperoffload.detach %w : !hyperoffload.remote<tensor<4xf32>>
  func.return
}
// CHECK: invalid.mlir:121:3: error: 'hyperoffload.detach': detach releases a device tensor, got !hyperoffload.remote<tensor<4xf32>>

// -----

// An argument tier that contradicts the argument's type.
func.func @tier_mismatch(%w: !hyperoffload.remote<tensor<4xf32>, host> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  func.return
}
// CHECK: invalid.mlir:129:1: error: 'hyperoffload.tier' on argument #0 of @tier_mismatch says 'remote' but its type !hyperoffload.remote<tensor<4xf32>, host> lives in 'host'

// -----

// A view reads nothing: the op reading through it is the use after the detach.
func.func @read_through_view_after_detach(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  hyperoffload.detach %x : tensor<2x2xf32>
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %y = arith.addf %v, %v : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: invalid.mlir:138:3: error: detach of live data that no store has persisted: %x is still used by 'arith.addf' after it, through its view %v

// -----

// A view taken before the detach still lives in the detached buffer.
func.func @view_taken_before_detach(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  hyperoffload.detach %x : tensor<2x2xf32>
  %y = arith.addf %v, %v : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: invalid.mlir:150:3: error: detach of live data that no store has persisted: %x is still used by 'arith.addf' after it, through its view %v

// -----

// Detaching a view releases the buffer it lives in.
func.func @detach_of_a_view(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  hyperoffload.detach %v : tensor<4xf32>
  %y = arith.addf %x, %x : tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
// CHECK: invalid.mlir:161:3: error: detach of live data that no store has persisted: %x is still used by 'arith.addf' after it, through its view %v
