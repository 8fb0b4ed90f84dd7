"""
Workarounds for xDSL 0.74 behaviour that breaks round trips of real programs,
or that disagrees with upstream MLIR on what is valid.

- `linalg.generic` with several results prints `-> (tensor<..>, tensor<..>)`
  but its parser only reads `-> tensor<..>, tensor<..>`: `RoundTripGenericOp`
  reads both.
- `linalg.generic` takes a vector operand as a shaped value of its own rank;
  upstream MLIR takes it as one element (rank 0), as `linalg.fill` of a
  `tensor<vector<2x4xf32>>` generalises: `RoundTripGenericOp` verifies it so.
- `linalg.fill` accepts only a float or integer value, of any type; upstream
  MLIR accepts any value whose type is the output's element type (a vector,
  an index) and nothing else (not an `f32` into an `f16` tensor):
  `RoundTripFillOp`.
- `tensor.reshape` compares element counts even when a dimension is dynamic
  (`?` is -1 to xDSL); upstream MLIR compares them only when both shapes are
  static: `RoundTripReshapeOp`.
- Ops upstream MLIR registers and xDSL does not (`shape.shape_of`,
  `tensor.rank`, `tensor.generate`, the transform dialect's patterns): text
  holding one is normalised by upstream MLIR
  (`hyperoffload.ir.parsing.parse_mlir`), which says which of its ops it
  registers; each such op is read as an `UpstreamOnlyOp`, kept and printed
  as it is in generic form. Ops no one registers (`test.*`) stay an error, as
  in `mlir-opt`.
- Named contractions and convolutions (`linalg.matmul`, `linalg.conv_*`)
  build their body as ``mul(in, in)`` then ``add(·, out)`` without casting
  the inputs to the output's element type, so a bf16 `linalg.matmul` into
  an f32 accumulator (a bf16 linear layer as torch-mlir prints it) builds
  an `arith.addf` of a bf16 and an f32 that does not verify; upstream casts
  the inputs first (`arith.extf`), and so does `cast_inputs`. (Text that
  also holds an op xDSL lacks, such as `linalg.batch_matmul`, is
  generalised by upstream MLIR first, which is why only the plain form
  failed.)
- A splat `dense<2> : vector<2xi64>` is held as its one element
  (`hyperoffload.ir.parsing`), but xDSL's convolutions and pooling read
  one stride and dilation per dimension: their subclasses here expand it.
- `linalg.pooling_nchw_max` builds its body as ``max(in, window)`` (the
  window's unused element) instead of upstream's ``max(out, in)``, so it
  computed garbage; `RoundTripPoolingNchwMaxOp` builds upstream's.
- Hexadecimal float elements of `dense<...>` literals: see
  `hyperoffload.ir.parsing.LocatingParser`.
- The lexer's string-literal pattern nests a `+` inside a `*`, so an
  unterminated literal backtracks exponentially (hours for 50 characters):
  `linear_string_literals` swaps in the same language without the nesting.
"""

import re
from abc import ABC
from collections.abc import Sequence
from math import prod
from typing import Any, ClassVar, Self, cast

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IntegerType,
    MemRefType,
    ShapedType,
    Signedness,
    TensorType,
    VectorType,
)
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg import ops as linalg_ops
from xdsl.dialects.linalg.ops import FillOp, GenericOp, YieldOp
from xdsl.dialects.tensor import ReshapeOp, Tensor
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    OpTrait,
    Region,
    SSAValue,
)
from xdsl.irdl import traits_def
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind


def _element_or_self(value_type: Attribute) -> Attribute:
    """The element type of a tensor or memref; any other type itself."""
    if isinstance(value_type, TensorType | MemRefType):
        shaped = cast(TensorType[Attribute] | MemRefType[Attribute], value_type)
        return shaped.get_element_type()
    return value_type


class RoundTripGenericOp(GenericOp):
    """`linalg.generic` that reads a parenthesised result-type list, and takes a vector operand as one element."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        original = parser.parse_comma_separated_list

        def results_in_parens(delimiter: Any, parse: Any, context_msg: str = "") -> Any:
            in_parens = parser._current_token.kind == MLIRTokenKind.L_PAREN  # pyright: ignore[reportPrivateUsage]
            if (
                delimiter is Parser.Delimiter.NONE
                and parse == parser.parse_attribute
                and in_parens
            ):
                return original(Parser.Delimiter.PAREN, parser.parse_type, context_msg)
            return original(delimiter, parse, context_msg)

        # a generic nested in a generic patches the patched parser: restore
        # what was there, not the class's method
        patched = vars(parser).get("parse_comma_separated_list")
        setattr(parser, "parse_comma_separated_list", results_in_parens)  # noqa: B010
        try:
            return super().parse(parser)
        finally:
            if patched is None:
                delattr(parser, "parse_comma_separated_list")
            else:
                setattr(parser, "parse_comma_separated_list", patched)  # noqa: B010

    def verify_(self) -> None:
        if not any(isinstance(operand.type, VectorType) for operand in self.operands):
            super().verify_()
            return
        # As upstream's `getRank`: a vector operand is an element, of rank 0.
        # The checks that do not need shapes; the loop ranges are not checked
        # (as for a dynamic shape).
        shaped = [o.type for o in self.operands if isinstance(o.type, ShapedType)]
        if any(isinstance(t, TensorType) for t in shaped) and any(
            isinstance(t, MemRefType) for t in shaped
        ):
            raise VerifyException("expected to have pure tensor or buffer semantics")
        maps = [attr.data for attr in self.indexing_maps]
        if len(maps) != len(self.operands):
            raise VerifyException(
                f"expected the number of indexing_map ({len(maps)}) to be "
                f"equal to the number of input/output operands ({len(self.operands)})"
            )
        loops = len(self.iterator_types)
        for index, (operand, indexing_map) in enumerate(
            zip(self.operands, maps, strict=True)
        ):
            if indexing_map.num_dims != loops:
                raise VerifyException(
                    f"expected indexing_map #{index} to have {loops} dim(s) to "
                    "match the number of loops"
                )
            operand_type = operand.type
            rank = (
                len(cast(ShapedType, operand_type).get_shape())
                if isinstance(operand_type, TensorType | MemRefType)
                else 0
            )
            if len(indexing_map.results) != rank:
                raise VerifyException(
                    f"expected operand #{index} of rank {rank} to match the "
                    f"result count of indexing_map #{index}, "
                    f"{len(indexing_map.results)}"
                )
        args = self.body.block.args
        if len(args) != len(self.operands):
            raise VerifyException(
                "expected as many non-induction variable region arguments as the "
                f"number of input/output operands, {len(self.operands)}, but got "
                f"{len(args)}"
            )
        for index, (operand, arg) in enumerate(zip(self.operands, args, strict=True)):
            element = _element_or_self(operand.type)
            if arg.type != element:
                raise VerifyException(
                    f"expected type of bb argument #{index} ({arg.type}) to match "
                    f"element or self type of the corresponding operand ({element})"
                )


class RoundTripFillOp(FillOp):
    """`linalg.fill` of any element type, verified as upstream MLIR verifies it."""

    @staticmethod
    def body_arg_types(  # pyright: ignore[reportIncompatibleMethodOverride]
        operands: Sequence[SSAValue],
    ) -> Sequence[Attribute]:
        return [_element_or_self(operand.type) for operand in operands]

    def verify_(self) -> None:
        if len(self.inputs) != 1 or len(self.outputs) != 1:
            raise VerifyException("expected one value and one output")
        value = self.inputs[0].type
        element = _element_or_self(self.outputs[0].type)
        if value != element:
            raise VerifyException(
                f"expected fill value type ({value}) to match output element "
                f"type ({element})"
            )


class RoundTripReshapeOp(ReshapeOp):
    """`tensor.reshape` that compares element counts only of static shapes."""

    def verify_(self) -> None:
        source = cast(TensorType[Attribute], self.source.type)
        result = self.result.type
        source_shape = source.get_shape()
        result_shape = result.get_shape()
        if all(d >= 0 for d in (*source_shape, *result_shape)):
            super().verify_()
            return
        shape = cast(TensorType[Attribute], self.shape.type).get_shape()
        if len(shape) != 1:
            raise VerifyException("shape tensor must have a rank one")
        if shape[0] < 0:
            raise VerifyException(
                "cannot use shape operand with dynamic length to reshape to "
                "statically-ranked tensor type"
            )
        if shape[0] != len(result_shape):
            raise VerifyException(
                "length of shape operand differs from the result's tensor rank"
            )
        if source.get_element_type() != result.get_element_type():
            raise VerifyException(
                "element types of source and result tensor types should be the same"
            )


def _cast(value: SSAValue, to: Attribute) -> SSAValue:
    """`value` converted to the element type `to` as upstream's bodies do."""
    source = value.type
    if source == to:
        return value
    if isinstance(source, AnyFloat) and isinstance(to, AnyFloat):
        wider = source.bitwidth < to.bitwidth
        return (arith.ExtFOp(value, to) if wider else arith.TruncFOp(value, to)).result
    if isinstance(source, IntegerType) and isinstance(to, IntegerType):
        target = cast(IntegerType[int, Signedness], to)
        if source.bitwidth < to.bitwidth:
            return arith.ExtSIOp(value, target).result
        return arith.TruncIOp(value, target).result
    if isinstance(source, IntegerType) and isinstance(to, AnyFloat):
        return arith.SIToFPOp(value, to).result
    return value


def _multiply_add_region(arg_types: Sequence[Attribute]) -> Region:
    """``out + cast(a) * cast(b)``, the body of a named contraction or convolution."""
    out = arg_types[-1]
    add, mul = (
        (arith.AddfOp, arith.MulfOp)
        if isinstance(out, AnyFloat)
        else (arith.AddiOp, arith.MuliOp)
    )

    @Builder.implicit_region(arg_types)
    def region(args: tuple[BlockArgument, ...]) -> None:
        product = mul(_cast(args[0], out), _cast(args[1], out))
        YieldOp(add(product, args[2]))

    return region


def _max_region(arg_types: Sequence[Attribute]) -> Region:
    """``max(out, cast(in))``, the body of `linalg.pooling_nchw_max`."""
    out = arg_types[-1]
    maximum = arith.MaximumfOp if isinstance(out, AnyFloat) else arith.MaxSIOp

    @Builder.implicit_region(arg_types)
    def region(args: tuple[BlockArgument, ...]) -> None:
        YieldOp(maximum(args[2], _cast(args[0], out)))

    return region


def _expanded(name: str) -> property:
    """
    The property `name` (strides, dilations) with a splat (`dense<2> :
    vector<2xi64>`, held as its one element by `parse_mlir`) expanded to one
    value per dimension, as xDSL's indexing maps read it.
    """

    def get(self: Operation) -> Attribute:
        attr: Any = self.properties[name]
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            return cast(Attribute, attr)
        dense = cast(DenseIntOrFPElementsAttr[Any], attr)
        values = dense.get_values()
        count = prod(dense.get_shape())
        if len(values) == 1 and count > 1:
            shaped: Any = dense.type
            return DenseIntOrFPElementsAttr.from_list(shaped, list(values) * count)
        return dense

    return property(get)


def _with_region(op: type[Operation], build: Any) -> type[Operation]:
    """
    A subclass of the named op `op` whose body `build` makes from its arg
    types, and whose strides and dilations read a splat as one value per
    dimension.
    """

    def get_hidden_region(
        cls: Any, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]
    ) -> Region:
        return build(cls.body_arg_types((*inputs, *outputs)))

    return type(
        f"RoundTrip{op.__name__}",
        (op,),
        {
            "get_hidden_region": classmethod(get_hidden_region),
            "strides": _expanded("strides"),
            "dilations": _expanded("dilations"),
        },
    )


_CASTING = (
    linalg_ops.MatmulOp,
    linalg_ops.Conv2DNchwFchwOp,
    linalg_ops.Conv2DNgchwFgchwOp,
    linalg_ops.Conv2DNgchwGfchwOp,
    linalg_ops.Conv2DNhwc_FhwcOp,
    linalg_ops.Conv2DNhwc_HwcfOp,
    linalg_ops.Conv2DNhwgcGfhwcOp,
)


class UpstreamOnlyOp(Operation, ABC):
    """
    An op upstream MLIR registers and xDSL does not (`upstream_only_op`):
    its operands, results, attributes and regions are kept, it is printed in
    generic form, and upstream MLIR verified it when it read the text.
    """

    name: ClassVar[str] = "builtin.upstream_only"
    traits = traits_def()

    @classmethod
    def has_trait(
        cls,
        trait: type[OpTrait] | OpTrait,
        *,
        value_if_unregistered: bool = True,
    ) -> bool:
        """Unknown, as for xDSL's unregistered ops: the caller says what to assume."""
        return value_if_unregistered


_UPSTREAM_ONLY: dict[str, type[Operation]] = {}


def upstream_only_op(name: str) -> type[Operation]:
    """The `UpstreamOnlyOp` class of the op `name` (one class per name)."""
    found = _UPSTREAM_ONLY.get(name)
    if found is None:
        found = type(  # a class per name: the parser creates ops by class
            f"UpstreamOnly[{name}]", (UpstreamOnlyOp,), {"name": name}
        )
        _UPSTREAM_ONLY[name] = found
    return found


def _swap(
    dialect: Dialect, replacements: dict[type[Operation], type[Operation]]
) -> Dialect:
    operations = [replacements.get(op, op) for op in dialect.operations]
    return Dialect(dialect.name, operations, list(dialect.attributes))


def linalg_round_trip() -> Dialect:
    """
    xDSL's linalg dialect with `RoundTripGenericOp`, `RoundTripFillOp`, the
    named contractions and convolutions casting their inputs and upstream's
    max-pooling body.
    """
    replacements: dict[type[Operation], type[Operation]] = {
        GenericOp: RoundTripGenericOp,
        FillOp: RoundTripFillOp,
        linalg_ops.PoolingNchwMaxOp: _with_region(
            linalg_ops.PoolingNchwMaxOp, _max_region
        ),
    }
    for op in _CASTING:
        replacements[op] = _with_region(op, _multiply_add_region)
    return _swap(Linalg, replacements)


def tensor_round_trip() -> Dialect:
    """xDSL's tensor dialect with `RoundTripReshapeOp`."""
    return _swap(Tensor, {ReshapeOp: RoundTripReshapeOp})


def linear_string_literals() -> None:
    """Make the lexer match string literals in linear time (see the module docstring)."""
    MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
        r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
    )
