"""
A function's static memory layout made concrete (for
`convert-hyperoffload-to-linalg{arena=true}`): one HBM arena allocated at the
function entry, and each device buffer that `hyperoffload-assign-offsets`
gave an offset (`hyperoffload.offsets`) a `memref.view` of it.

An op whose result has an offset writes into a writable tensor of its view,
`bufferization.to_tensor %view restrict writable`: a linalg op's `outs` init
(a `tensor.insert_slice`'s `dest`) becomes that tensor where it is a
`tensor.empty` or is not read, a fill (scalars broadcast into a tensor)
cloned onto it where it is one, else a copy into it; a `tensor.empty` is
replaced by it; `arith` and `math` on tensors become the `linalg.generic`
that `--convert-elementwise-to-linalg` makes, writing into it (that pass
would write into an operand's buffer where it can, outside the layout).

```mlir
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {hyperoffload.arena_bytes = 64 : i64} {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {...} -> tensor<4xf32>
```
becomes
```mlir
  %arena = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
  %c0 = arith.constant 0 : index
  %y_buf = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %0 = bufferization.to_tensor %y_buf restrict writable : memref<4xf32> to tensor<4xf32>
  %y = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {...}
```
The views alias one another only where the layout says their buffers are
never live at once, which is what `restrict` promises bufferization.
Arguments and constants keep their own storage (their ranges of the arena
stay unused); other results with an offset (a `tensor.concat`, an op with
regions, ...) keep the buffer bufferization allocates for them.
"""

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.bufferization import ToTensorOp
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    TensorType,
    i8,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.ir import sizes
from hyperoffload.ir.diagnostics import diagnostic_at

ARENA_ATTR = "hyperoffload.arena_bytes"
"""On a function: the size of its arena in bytes."""
OFFSETS_ATTR = "hyperoffload.offsets"
"""On an op: the arena offset of each result's buffer, -1 where it has none."""
ALIGNMENT = 64
"""The alignment of the arena allocation, in bytes."""


def static_tensor(typ: Attribute) -> TensorType[Attribute] | None:
    """`typ` if it is a statically shaped tensor."""
    if isinstance(typ, TensorType) and typ.has_static_shape():
        return typ  # pyright: ignore[reportUnknownVariableType]
    return None


def tensor_bytes(typ: Attribute) -> int | None:
    """Bytes of a static tensor (`hyperoffload.ir.sizes`); else None."""
    value_type = static_tensor(typ)
    return None if value_type is None else sizes.tensor_bytes(value_type)


def _is_fill(op: Operation) -> bool:
    """A linalg op broadcasting scalars into its one `outs` tensor."""
    return (
        isinstance(op, LinalgStructuredOperation)
        and len(op.results) == 1
        and not any(isinstance(v.type, TensorType) for v in op.inputs)
        and not any(isinstance(inner, IndexOp) for inner in op.body.walk())
    )


def _reads_init(op: LinalgStructuredOperation, index: int) -> bool:
    """Whether the body of `op` reads the values of its `outs` init `index`."""
    return bool(op.body.block.args[len(op.inputs) + index].uses)


class FunctionArena:
    """The arena of one function: its allocation and views at given offsets."""

    def __init__(self, function: FuncOp):
        size = function.attributes.get(ARENA_ATTR)
        if not isinstance(size, IntegerAttr) or size.value.data < 0:
            raise PassFailedException(
                diagnostic_at(
                    function,
                    f"@{function.sym_name.data} has no memory layout "
                    f"('{ARENA_ATTR}'): run hyperoffload-assign-offsets first",
                )
            )
        self.function = function
        self.size: int = size.value.data
        self._arena: SSAValue | None = None

    def offset(self, op: Operation, index: int) -> int | None:
        """The offset of the buffer of result `index` of `op`; None if it has none."""
        attr = op.attributes.get(OFFSETS_ATTR)
        if attr is None:
            return None
        values: tuple[int, ...] = ()
        if isinstance(attr, DenseArrayBase):
            array = cast(DenseArrayBase[IntegerType | AnyFloat], attr)
            if isinstance(array.elt_type, IntegerType):
                values = cast(DenseArrayBase[IntegerType], array).get_values()
        if len(values) != len(op.results):
            raise PassFailedException(
                diagnostic_at(
                    op,
                    f"'{OFFSETS_ATTR}' must be an array<i64> with one entry per "
                    f"result ({len(op.results)})",
                )
            )
        offset = values[index]
        if offset < 0:
            return None
        nbytes = tensor_bytes(op.results[index].type)
        if nbytes is not None and offset + nbytes > self.size:
            raise PassFailedException(
                diagnostic_at(
                    op,
                    f"the buffer of result #{index} ({nbytes} B at offset {offset}) "
                    f"does not fit in the arena of {self.size} B",
                )
            )
        return offset

    def view(
        self, offset: int, typ: TensorType[Attribute]
    ) -> tuple[list[Operation], SSAValue]:
        """The ops of a `memref.view` for `typ` at `offset`, and the view."""
        if self._arena is None:  # allocated once, at the function entry
            alloc = memref.AllocOp.get(i8, ALIGNMENT, [self.size])
            alloc.memref.name_hint = "arena"
            Rewriter.insert_op(alloc, InsertPoint.at_start(self.function.body.block))
            self._arena = alloc.memref
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        shift.result.name_hint = f"c{offset}"
        memref_type = MemRefType(
            typ.element_type, typ.get_shape(), NoneAttr(), NoneAttr()
        )
        view = memref.ViewOp(self._arena, shift, [], memref_type)
        return [shift, view], view.result

    def range_of(self, value: SSAValue) -> tuple[int, int] | None:
        """Where `value` may live in the arena: its own buffer's bytes, the whole
        arena when it is a view or an in-place result, None for an argument or
        a constant (storage of their own)."""
        if not isinstance(value, OpResult) or isinstance(value.op, arith.ConstantOp):
            return None
        offset = self.offset(value.op, value.index)
        nbytes = tensor_bytes(value.type)
        if offset is None or nbytes is None:
            return 0, self.size
        return offset, offset + nbytes

    def clobbers(self, op: Operation, where: tuple[int, int] | None) -> bool:
        """Whether a buffer of `op`'s own overlaps the byte range `where`."""
        if where is None or OFFSETS_ATTR not in op.attributes:
            return False
        for index, result in enumerate(op.results):
            offset = self.offset(op, index)
            if offset is None:
                continue
            end = offset + (tensor_bytes(result.type) or self.size)
            if offset < where[1] and where[0] < end:
                return True
        return False

    def place(self) -> None:
        """Write each result with an offset that can be placed into its view."""
        inits: list[Operation] = []
        for op in list(self.function.body.block.ops):
            if isinstance(op, LinalgStructuredOperation):
                first = len(op.inputs)
                for index in range(len(op.results)):
                    reads = _reads_init(op, index)
                    inits += self._place_dest(op, index, first + index, reads)
            elif isinstance(op, tensor.InsertSliceOp | tensor.InsertOp):
                inits += self._place_dest(op, 0, 1, True)  # operand 1: `dest`
            elif isinstance(op, tensor.EmptyOp):
                self._place_empty(op)
            elif _is_elementwise(op):
                self._place_elementwise(op)
        erased = True
        while erased:  # the inits nothing uses any more (a fill, then its empty)
            erased = False
            for op in inits:
                if op.parent is not None and not any(r.uses for r in op.results):
                    Rewriter.erase_op(op)
                    erased = True

    def _writable(self, op: Operation, index: int) -> SSAValue | None:
        """A writable tensor of the view of result `index` of `op`, built right
        before `op`; None if that result has no offset."""
        offset = self.offset(op, index)
        result = op.results[index]
        typ = static_tensor(result.type)
        if offset is None or typ is None:
            return None
        ops, view = self.view(offset, typ)
        view.name_hint = f"{result.name_hint}_buf" if result.name_hint else None
        to_tensor = ToTensorOp(view, restrict=True, writable=True)
        Rewriter.insert_op([*ops, to_tensor], InsertPoint.before(op))
        return to_tensor.tensor

    def _place_dest(
        self, op: Operation, index: int, operand: int, reads: bool
    ) -> list[Operation]:
        """
        Make the view of result `index` the destination operand `operand` of
        `op` (its values read by `op` when `reads`): a `tensor.empty` is
        replaced, a fill cloned onto the view, any other value copied into it.
        Return the init replaced if it may now be unused.
        """
        view = self._writable(op, index)
        if view is None:
            return []
        init = op.operands[operand]
        owner = init.owner
        if not reads or isinstance(owner, tensor.EmptyOp):
            new = view
        elif isinstance(owner, LinalgStructuredOperation) and _is_fill(owner):
            fill = owner.clone()  # its scalars are defined before `owner`
            fill.operands[len(fill.inputs)] = view
            Rewriter.insert_op(fill, InsertPoint.before(op))
            new = fill.results[0]
        else:  # a computed value: copy it, as bufferization would into a new buffer
            copy = _generic([init], view)
            Rewriter.insert_op(copy, InsertPoint.before(op))
            new = copy.results[0]
        op.operands[operand] = new
        if isinstance(owner, tensor.EmptyOp):
            return [owner]
        if isinstance(owner, LinalgStructuredOperation) and _is_fill(owner):
            empty = owner.outputs[0].owner
            return [owner, empty] if isinstance(empty, tensor.EmptyOp) else [owner]
        return []

    def _place_empty(self, op: tensor.EmptyOp) -> None:
        writable = self._writable(op, 0)
        if writable is not None:
            writable.name_hint = op.tensor.name_hint
            Rewriter.replace_op(op, [], [writable])

    def _place_elementwise(self, op: Operation) -> None:
        """`arith` or `math` on tensors as the `linalg.generic` that
        `--convert-elementwise-to-linalg` makes, but writing into the view
        (that pass would write into an operand's buffer where it can)."""
        view = self._writable(op, 0)
        if view is None:
            return
        result = op.results[0]
        element = cast(TensorType[Attribute], result.type).element_type
        attributes = {k: v for k, v in op.attributes.items() if k != OFFSETS_ATTR}

        def scalar(args: Sequence[SSAValue]) -> Operation:
            return type(op).create(
                operands=args,
                result_types=[element],
                properties=dict(op.properties),
                attributes=attributes,
            )

        generic = _generic(list(op.operands), view, scalar)
        generic.results[0].name_hint = result.name_hint
        Rewriter.replace_op(op, generic, generic.results)


def _is_elementwise(op: Operation) -> bool:
    """`arith` or `math` mapped over tensors of one static shape."""
    if op.dialect_name() not in ("arith", "math") or len(op.results) != 1:
        return False
    result = static_tensor(op.results[0].type)
    shapes = [
        t.get_shape() if (t := static_tensor(v.type)) else None for v in op.operands
    ]
    return (
        result is not None
        and bool(shapes)
        and not op.regions
        and all(shape == result.get_shape() for shape in shapes)
    )


def _generic(
    inputs: Sequence[SSAValue],
    init: SSAValue,
    scalar: Callable[[Sequence[SSAValue]], Operation] | None = None,
) -> GenericOp:
    """
    A parallel `linalg.generic` with identity maps from `inputs` into `init`
    yielding the op `scalar` builds from the elements of `inputs`; without
    `scalar`, the first input (a copy).
    """
    typ = cast(TensorType[Attribute], init.type)
    rank = len(typ.get_shape())
    elements = [cast(TensorType[Attribute], v.type).element_type for v in inputs]
    block = Block(arg_types=[*elements, typ.element_type])
    value: SSAValue = block.args[0]
    if scalar is not None:
        op = scalar(block.args[: len(inputs)])
        block.add_op(op)
        value = op.results[0]
    block.add_op(YieldOp(value))
    identity = AffineMapAttr(AffineMap.identity(rank))
    return GenericOp(
        inputs,
        [init],
        Region(block),
        [identity] * (len(inputs) + 1),
        [IteratorTypeAttr.parallel()] * rank,
        [typ],
    )
