"""
The `hyperoffload` dialect: explicit data movement across a memory hierarchy.

Compute only ever reads device-resident (`hbm`) tensors. A tensor that leaves
the device is represented by a distinct type, `!hyperoffload.remote<...>`, so
feeding a remote copy to compute is a type error rather than a runtime miss.

```mlir
func.func @layer(%x: tensor<4x8xf32>,
                 %w: !hyperoffload.remote<tensor<8x8xf32>>) -> tensor<4x8xf32> {
  %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
  hyperoffload.detach %x : tensor<4x8xf32>
  %wd = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
  ...
}
```

The per-op verifiers check what one op can see. The invariants that span a
function (no compute reads a remote copy, no use after a detach, a detach
never drops the only copy of live data) are checked by
`hyperoffload.dialects.residency.verify_residency`, which `hyperoffload-opt`
runs whenever it verifies and which the `hyperoffload-verify` pass exposes.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.scf import IfOp, IndexSwitchOp
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryFreeEffect, MemoryReadEffect
from xdsl.utils.exceptions import VerifyException

from hyperoffload.dialects.collectives import COLLECTIVE_OPS
from hyperoffload.support.quantize import Compression
from hyperoffload.support.tiers import Tier

TIER_ARG_ATTR = "hyperoffload.tier"
"""Name of the function-argument attribute that records where an argument lives."""
ALIASING_ARG_ATTR = "tf.aliasing_output"
"""
The argument attribute naming the result that holds its update (`= N :
i32`: the XLA and JAX convention for a donated buffer). A training step's
parameters and optimizer states carry it: with `place-arguments`, a plan
writes such a result back where its argument stays (`hyperoffload.planning.planner`).
"""


def updated_results(function: FuncOp) -> dict[int, int]:
    """
    Argument index -> the position of the result holding its update, as
    each argument's `ALIASING_ARG_ATTR` names it.

    ```mlir
    func.func @step(%w: tensor<4xf32> {tf.aliasing_output = 1 : i32}) -> (f32, tensor<4xf32>)
    ```
    gives `{0: 1}`.
    """
    found: dict[int, int] = {}
    arg_attrs = function.arg_attrs
    for index, attrs in enumerate(arg_attrs.data if arg_attrs else ()):
        assert isinstance(attrs, DictionaryAttr)
        position = attrs.data.get(ALIASING_ARG_ATTR)
        if isinstance(position, IntegerAttr):
            found[index] = position.value.data
    return found


EXPERT_ATTR = "hyperoffload.expert"
"""
A routed expert, `array<i64: layer, expert>`: on its weight arguments (the
exporter's tag) and on the `scf.if` that runs it.
"""
MOE_ATTR = "hyperoffload.moe"
"""Function attribute of a MoE export: `{experts, top_k, shared, router, routed}`."""
EXPERT_PLAN_ATTR = "hyperoffload.expert_plan"
"""Function attribute of a routed program planned with a profile: `{budget, routing}`."""


_TIER_NAMES = frozenset(t.value for t in Tier)


def _unknown_tier(name: str) -> str:
    return f"unknown memory tier '{name}', expected one of " + ", ".join(Tier)


def _parse_tier(parser: AttrParser) -> Tier:
    """Parse a tier name, bare (`remote`) or quoted (`"remote"`)."""
    pos = parser.pos
    name = parser.parse_identifier_or_str_literal(" (a memory tier)")
    return _tier_named(parser, name, pos)


def _tier_named(parser: AttrParser, name: str, pos: int) -> Tier:
    if name not in _TIER_NAMES:
        parser.raise_error(_unknown_tier(name), pos, parser.pos)
    return Tier(name)


def _print_tier(printer: Printer, tier: Tier) -> None:
    """
    Print a tier name: bare in the custom form, quoted in the generic form.

    The quoted spelling is what upstream MLIR expects of a dialect loaded
    from IRDL (every parameter is an attribute), so generic output of
    `hyperoffload-opt` parses in `mlir-opt --irdl-file=...`.
    """
    if printer.print_generic_format:
        printer.print_string_literal(tier.value)
    else:
        printer.print_string(tier.value)


@irdl_attr_definition
class TierAttr(ParametrizedAttribute):
    """
    A memory tier, used as a memory space and as the function-argument
    attribute `hyperoffload.tier` (the IR form of `Parameter(..., device=remote)`).

    ```mlir
    func.func @step(%w: tensor<4096x4096xbf16> {hyperoffload.tier = #hyperoffload.tier<remote>})
    ```
    """

    name = "hyperoffload.tier"

    tier_name: StringAttr

    def __init__(self, tier: Tier | str):
        super().__init__(StringAttr(Tier(tier).value))

    @property
    def tier(self) -> Tier:
        return Tier(self.tier_name.data)

    def verify(self) -> None:
        if self.tier_name.data not in _TIER_NAMES:
            raise VerifyException(_unknown_tier(self.tier_name.data))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            return [StringAttr(_parse_tier(parser).value)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_tier(printer, self.tier)


@irdl_attr_definition
class RemoteType(ParametrizedAttribute, TypeAttribute):
    """
    A copy of a tensor that lives outside device memory. Only `prefetch` reads
    it; compute never does. The tier defaults to `remote` and is omitted then.

    ```mlir
    !hyperoffload.remote<tensor<4x8xf32>>
    !hyperoffload.remote<tensor<4x8xf32>, host>
    ```
    """

    name = "hyperoffload.remote"

    tensor: TensorType[Attribute]
    tier_attr: TierAttr

    def __init__(self, tensor: TensorType[Attribute], tier: Tier | str = Tier.REMOTE):
        super().__init__(tensor, TierAttr(tier))

    @property
    def tier(self) -> Tier:
        return self.tier_attr.tier

    def verify(self) -> None:
        if self.tier == Tier.HBM:
            raise VerifyException(
                "a remote copy cannot live in 'hbm'; device-resident data is a plain tensor"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            tensor = parser.parse_type()
            if not isinstance(tensor, TensorType):
                parser.raise_error(
                    f"expected a tensor type in !hyperoffload.remote, got {tensor}",
                    pos,
                    parser.pos,
                )
            tier = TierAttr(Tier.REMOTE)
            if parser.parse_optional_punctuation(","):
                pos = parser.pos
                name = parser.parse_optional_identifier_or_str_literal()
                if name is None:
                    attr = parser.parse_attribute()
                    if not isinstance(attr, TierAttr):
                        parser.raise_error(
                            f"expected a memory tier, got {attr}", pos, parser.pos
                        )
                    tier = attr
                else:
                    tier = TierAttr(_tier_named(parser, name, pos))
        return [tensor, tier]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.tensor)
            if printer.print_generic_format:
                printer.print_string(", ")
                printer.print_attribute(self.tier_attr)
            elif self.tier != Tier.REMOTE:
                printer.print_string(", ")
                _print_tier(printer, self.tier)


def _type_error(what: str, value_type: Attribute) -> VerifyException:
    return VerifyException(f"{what}, got {value_type}")


COMPRESS_ATTR = "compress"
"""The optional attribute of `store` and `prefetch` naming a compression scheme."""


def _verify_compress(op_name: str, scheme: StringAttr | None, value: SSAValue) -> None:
    """A known scheme (`hyperoffload.support.quantize.Compression`) on a float tensor."""
    if scheme is None:
        return
    known = ", ".join(f'"{c}"' for c in Compression)
    if scheme.data not in {c.value for c in Compression}:
        raise VerifyException(
            f'unknown compression "{scheme.data}" on {op_name}, expected one of {known}'
        )
    value_type: Attribute = value.type
    element: Attribute | None = None
    if isinstance(value_type, TensorType):
        element = cast(TensorType[Attribute], value_type).element_type
    if not isinstance(element, AnyFloat):
        raise VerifyException(
            f"only float tensors may be compressed, but {op_name} moves {value_type}"
        )


def _scheme_text(scheme: StringAttr | None) -> str:
    return "no compress" if scheme is None else f'compress = "{scheme.data}"'


def _compress_attr(compress: Compression | str | None) -> dict[str, Attribute]:
    return {} if compress is None else {COMPRESS_ATTR: StringAttr(str(compress))}


SPECULATIVE_ATTR = "speculative"
"""The unit attribute of a `prefetch` issued ahead of a branch that may not read it."""

BRANCH_OPS = (IfOp, IndexSwitchOp)
"""The ops whose regions are exclusive paths, each run at most once: a `detach`
may sit in them, and a speculative prefetch anticipates them."""


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """
    Asynchronous copy of a remote copy into device memory. The result is
    device-resident; the copy is complete before its first consumer runs.

    With `compress`, the copy on the link is compressed (`int8`: int8
    values and an f16 scale per row, `hyperoffload.support.quantize`) and
    decompressed on the device before the first consumer. A prefetch of a
    compressed store's copy carries the store's scheme; one of an argument
    reads the caller's copy, compressed with that scheme.

    ```mlir
    %w = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<8x8xf32>> -> tensor<8x8xf32>
    %k = hyperoffload.prefetch %kh {compress = "int8"} : !hyperoffload.remote<tensor<1x8x128x64xbf16>> -> tensor<1x8x128x64xbf16>
    ```
    """

    name = "hyperoffload.prefetch"

    source = operand_def()
    result = result_def(TensorType)
    compress = opt_attr_def(StringAttr)
    speculative = opt_attr_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryAllocEffect())

    # `compress` and `speculative` print in the attribute dictionary
    # (`{compress = "int8", speculative}`), attributes (not properties) in
    # both forms, which upstream's IRDL dialect keeps as discardable.
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(
        self,
        source: Operation | SSAValue,
        compress: Compression | str | None = None,
        speculative: bool = False,
    ):
        source_type = SSAValue.get(source).type
        assert isinstance(source_type, RemoteType)
        attributes = _compress_attr(compress)
        if speculative:
            attributes[SPECULATIVE_ATTR] = UnitAttr()
        super().__init__(
            operands=[source],
            result_types=[source_type.tensor],
            attributes=attributes,
        )

    def verify_(self) -> None:
        source_type = self.source.type
        if not isinstance(source_type, RemoteType):
            raise _type_error(
                "prefetch reads a remote copy (!hyperoffload.remote<...>)", source_type
            )
        if source_type.tensor != self.result.type:
            raise VerifyException(
                f"prefetch result type {self.result.type} does not match the "
                f"remote copy's tensor type {source_type.tensor}"
            )
        _verify_compress("prefetch", self.compress, self.result)
        store = self.source.owner
        if isinstance(store, StoreOp) and store.compress != self.compress:
            raise VerifyException(
                f"prefetch with {_scheme_text(self.compress)} reads a copy stored "
                f"with {_scheme_text(store.compress)}: they must match"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """
    Asynchronous copy of a device tensor to another tier. Yields a handle to
    the remote copy, which a later `prefetch` reads.

    With `compress`, the tensor is compressed on the device before its copy
    (`int8`: int8 values and an f16 scale per row, lossy,
    `hyperoffload.support.quantize`); the remote copy holds the compressed
    form and every prefetch of it carries the same scheme.

    ```mlir
    %h = hyperoffload.store %x : tensor<4x8xf32> -> !hyperoffload.remote<tensor<4x8xf32>>
    %kh = hyperoffload.store %k {compress = "int8"} : tensor<1x8x128x64xbf16> -> !hyperoffload.remote<tensor<1x8x128x64xbf16>>
    ```
    """

    name = "hyperoffload.store"

    value = operand_def()
    handle = result_def(RemoteType)
    compress = opt_attr_def(StringAttr)

    traits = traits_def(MemoryReadEffect(), MemoryAllocEffect())

    assembly_format = "$value attr-dict `:` type($value) `->` type($handle)"

    def __init__(
        self,
        value: Operation | SSAValue,
        tier: Tier = Tier.REMOTE,
        compress: Compression | str | None = None,
    ):
        value_type: Attribute = SSAValue.get(value).type
        assert isinstance(value_type, TensorType)
        tensor = cast(TensorType[Attribute], value_type)
        super().__init__(
            operands=[value],
            result_types=[RemoteType(tensor, tier)],
            attributes=_compress_attr(compress),
        )

    def verify_(self) -> None:
        value_type: Attribute = self.value.type
        if not isinstance(value_type, TensorType):
            raise _type_error("store copies a device tensor", value_type)
        assert isinstance(self.handle.type, RemoteType)
        if self.handle.type.tensor != value_type:
            raise VerifyException(
                f"store result type {self.handle.type} does not hold the stored "
                f"type {value_type}"
            )
        _verify_compress("store", self.compress, self.value)


@irdl_op_definition
class DetachOp(IRDLOperation):
    """
    Releases the device copy of a tensor. Legal only where the data is dead
    or a `store` before it holds the data elsewhere; it must sit in the block
    that defines the tensor or in a branch (`scf.if`, `scf.index_switch`)
    nested in it, never in a loop, and nothing after it (later in its block,
    or after the enclosing branch op) may use the tensor.

    ```mlir
    hyperoffload.detach %x : tensor<4x8xf32>
    scf.if %routed {
      ...
      hyperoffload.detach %w : tensor<8x8xf32>   // %w defined above the scf.if
    }
    ```
    """

    name = "hyperoffload.detach"

    value = operand_def()

    traits = traits_def(MemoryFreeEffect())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Operation | SSAValue):
        super().__init__(operands=[value])

    def verify_(self) -> None:
        if not isinstance(self.value.type, TensorType):
            raise _type_error("detach releases a device tensor", self.value.type)
        owner = self.value.owner
        defining_block = owner if isinstance(owner, Block) else owner.parent_block()
        block = self.parent_block()
        while block is not defining_block:
            parent = block.parent_op() if block is not None else None
            if not isinstance(parent, BRANCH_OPS):
                raise VerifyException(
                    "detach must be in the block that defines its operand or in "
                    "a branch (scf.if, scf.index_switch) nested in it (a detach "
                    "inside a loop could drop data a later iteration still reads)"
                )
            block = parent.parent_block()


OFFLOAD_OPS = (PrefetchOp, StoreOp, DetachOp)
"""The ops that move data: none computes."""

AHEAD_ATTR = "ahead"
"""The unit attribute of a `gather` issued for the next call of the function."""


@irdl_op_definition
class GatherOp(IRDLOperation):
    """
    Reads blocks of a pooled cache, chosen at run time, into device memory:
    `result[i] = pool[indices[i]]` along the first (block) dimension. It is
    how a decode step with query-aware block selection (`--attention topk`)
    reads the blocks it chose: the pool stays remote, and only the chosen
    blocks reach HBM.

    With `resident %blocks[%ids]`, the blocks whose index is among `%ids`
    are read from `%blocks`, a device tensor of blocks fetched ahead (hits);
    the others are copied from the pool on demand (misses, whose transfer
    the step waits for). With `ahead`, the gather is issued for the next call
    (the blocks predicted from this call's selection): its copy overlaps this
    call's compute and nothing in this call may read its result (it is
    returned, to be the next call's `resident` blocks). With `compress`, the
    blocks move compressed, as a `prefetch` with that scheme.

    ```mlir
    %k = hyperoffload.gather %pool[%chosen] : !hyperoffload.remote<tensor<64x1x8x16x128xf16>>, tensor<4xi64> -> tensor<4x1x8x16x128xf16>
    %k = hyperoffload.gather %pool[%chosen] resident %hot[%hot_ids] : !hyperoffload.remote<tensor<64x1x8x16x128xf16>>, tensor<4xi64>, tensor<4x1x8x16x128xf16>, tensor<4xi64> -> tensor<4x1x8x16x128xf16>
    %next = hyperoffload.gather %pool[%predicted] {ahead} : !hyperoffload.remote<tensor<64x1x8x16x128xf16>>, tensor<4xi64> -> tensor<4x1x8x16x128xf16>
    ```
    """

    name = "hyperoffload.gather"

    pool = operand_def(RemoteType)
    indices = operand_def(TensorType)
    resident = opt_operand_def(TensorType)
    resident_ids = opt_operand_def(TensorType)
    result = result_def(TensorType)
    compress = opt_attr_def(StringAttr)
    ahead = opt_attr_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(),)
    traits = traits_def(MemoryReadEffect(), MemoryAllocEffect())

    assembly_format = (
        "$pool `[` $indices `]` (`resident` $resident^ `[` $resident_ids `]`)? "
        "attr-dict `:` type($pool) `,` type($indices) "
        "(`,` type($resident)^ `,` type($resident_ids))? `->` type($result)"
    )

    def __init__(
        self,
        pool: Operation | SSAValue,
        indices: Operation | SSAValue,
        resident: tuple[Operation | SSAValue, Operation | SSAValue] | None = None,
        ahead: bool = False,
        compress: Compression | str | None = None,
    ):
        pool_type = SSAValue.get(pool).type
        index_type = SSAValue.get(indices).type
        assert isinstance(pool_type, RemoteType)
        assert isinstance(index_type, TensorType)
        shape = [
            *cast(TensorType[Attribute], index_type).get_shape(),
            *pool_type.tensor.get_shape()[1:],
        ]
        attributes = _compress_attr(compress)
        if ahead:
            attributes[AHEAD_ATTR] = UnitAttr()
        blocks: list[Operation | SSAValue] = []
        ids: list[Operation | SSAValue] = []
        if resident is not None:
            blocks, ids = [resident[0]], [resident[1]]
        super().__init__(
            operands=[pool, indices, blocks, ids],
            result_types=[TensorType(pool_type.tensor.element_type, shape)],
            attributes=attributes,
        )

    def verify_(self) -> None:
        pool_type = self.pool.type
        assert isinstance(pool_type, RemoteType)
        pool_shape = pool_type.tensor.get_shape()
        element = pool_type.tensor.element_type
        if not pool_shape:
            raise VerifyException("gather reads blocks along a pool's first dimension")
        index_shape = self._index_shape(self.indices, "indices")
        want = TensorType(element, [*index_shape, *pool_shape[1:]])
        if self.result.type != want:
            raise VerifyException(
                f"gather of {index_shape[0]} blocks of {pool_type.tensor} yields "
                f"{want}, not {self.result.type}"
            )
        if (self.resident is None) != (self.resident_ids is None):
            raise VerifyException("resident blocks need their block indices")
        if self.resident is not None and self.resident_ids is not None:
            ids_shape = self._index_shape(self.resident_ids, "resident block indices")
            held = TensorType(element, [*ids_shape, *pool_shape[1:]])
            if self.resident.type != held:
                raise VerifyException(
                    f"resident blocks of {pool_type.tensor} indexed by "
                    f"{self.resident_ids.type} are {held}, not {self.resident.type}"
                )
            if self.ahead is not None:
                raise VerifyException(
                    "a gather issued ahead fetches every block it names: it "
                    "takes no resident blocks"
                )
        _verify_compress("gather", self.compress, self.result)

    @staticmethod
    def _index_shape(value: SSAValue, what: str) -> tuple[int, ...]:
        value_type = cast(TensorType[Attribute], value.type)
        shape = value_type.get_shape()
        if len(shape) != 1 or not isinstance(value_type.element_type, IntegerType):
            raise VerifyException(
                f"gather's {what} are a 1-D tensor of integers, got {value_type}"
            )
        return shape


BLOCK_OPS = (GatherOp,)
"""The ops that read blocks of a pooled cache chosen at run time."""

Hyperoffload = Dialect(
    "hyperoffload",
    [*OFFLOAD_OPS, *BLOCK_OPS, *COLLECTIVE_OPS],
    [TierAttr, RemoteType],
)
