"""
Workarounds for xDSL 0.74 behaviour that breaks round trips of real programs.

- `linalg.generic` with several results prints `-> (tensor<..>, tensor<..>)`
  but its parser only reads `-> tensor<..>, tensor<..>`: `LinalgRoundTrip`
  swaps in a `linalg.generic` that reads both.
- Hexadecimal float elements of `dense<...>` literals: see
  `hyperoffload.ir.parsing.LocatingParser`.
"""

from typing import Any, Self

from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind


class RoundTripGenericOp(GenericOp):
    """`linalg.generic` whose parser also reads a parenthesised result-type list."""

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

        setattr(parser, "parse_comma_separated_list", results_in_parens)  # noqa: B010
        try:
            return super().parse(parser)
        finally:
            delattr(parser, "parse_comma_separated_list")


def linalg_round_trip() -> Dialect:
    """xDSL's linalg dialect with `RoundTripGenericOp`."""
    operations = [
        RoundTripGenericOp if op is GenericOp else op for op in Linalg.operations
    ]
    return Dialect(Linalg.name, operations, list(Linalg.attributes))
