"""
`Skeleton`, `offload_positions`, `reorder` and `arrange` on hand-written
bodies whose offload ops stand where they are legal but not where they
belong. Positions are indices into the skeleton (the body without its
offload ops): "at position i" is right before skeleton op i.
"""

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.planning.arrange import (
    Rank,
    Skeleton,
    arrange,
    offload_positions,
    reorder,
)
from hyperoffload.support.positions import SkeletonPosition as At

M = "tensor<16x16xf32>"
T = "tensor<256xf32>"
R = "!hyperoffload.remote<tensor<256xf32>>"
COSTS = CostModel(load_hardware("ascend-910c"))


def parsed(ctx: Context, text: str) -> FuncOp:
    return main_function(parse_mlir(ctx, text, "t.mlir"))


def fusion_of(function: FuncOp) -> Fusion:
    return Fusion(function.body.block, COSTS)


def module_of(function: FuncOp) -> ModuleOp:
    module = function.parent_op()
    assert isinstance(module, ModuleOp)
    return module


def body(function: FuncOp) -> list[str]:
    """The body of `function` as printed, one op per line."""
    return [line.strip() for line in str(function).splitlines()[1:-1]]


def offload(function: FuncOp, kind: type[Operation], operand: str) -> Operation:
    """
    The offload op of `kind` whose first operand is named `operand` (a
    fetched copy %u_1 is named `u`, as its remote argument %u).
    """
    (op,) = [
        op
        for op in function.body.block.ops
        if isinstance(op, kind) and op.operands[0].name_hint == operand
    ]
    return op


# Skeleton ops: 0 %m, 1 %v (a view of %m), 2 %a, 3 %b, 4 %r, 5 the return.
# The fetches stand at the top, the store of %b after %r, every detach right
# before the return.
SCATTERED = f"""func.func @f(%x: {M}, %w: {R}, %u: {R}) -> {T} {{
  %u_1 = hyperoffload.prefetch %u : {R} -> {T}
  %w_1 = hyperoffload.prefetch %w : {R} -> {T}
  %m = arith.mulf %x, %x : {M}
  %v = tensor.collapse_shape %m [[0, 1]] : {M} into {T}
  %a = arith.mulf %v, %v : {T}
  %b = arith.mulf %a, %u_1 : {T}
  %r = arith.mulf %b, %w_1 : {T}
  %b_remote = hyperoffload.store %b : {T} -> {R}
  hyperoffload.detach %m : {M}
  hyperoffload.detach %u_1 : {T}
  hyperoffload.detach %w_1 : {T}
  hyperoffload.detach %b : {T}
  func.return %r : {T}
}}"""


def test_the_skeleton_is_the_body_without_its_offload_ops(ctx: Context):
    function = parsed(ctx, SCATTERED)
    skeleton = Skeleton(function.body.block)
    assert [op.name for op in skeleton.ops] == [
        "arith.mulf",
        "tensor.collapse_shape",
        "arith.mulf",
        "arith.mulf",
        "arith.mulf",
        "func.return",
    ]
    # the fetches stand before skeleton op 0, the store before op 5
    prefetch = offload(function, PrefetchOp, "w")
    store = offload(function, StoreOp, "b")
    assert (skeleton.position_of(prefetch), skeleton.position_of(store)) == (0, 5)
    assert skeleton.holder(prefetch) is None
    # %b is produced by skeleton op 3; a detach of a fetched copy reads a
    # value its prefetch makes (that one stands before op 0: after "op -1")
    assert skeleton.producer_of_operand(store) == 3
    assert skeleton.producer_of_operand(offload(function, DetachOp, "w")) == -1


def test_offload_positions(ctx: Context):
    # The prefetches where they are given (%u_1 before %b, %w_1 before %r);
    # the store of %b right after its producer (op 3: position 4); each
    # detach right after the last reader: %m is read by the view %v (op 1)
    # and, through it, by %a (op 2): position 3; %u_1 by %b (position 4);
    # %w_1 and %b by %r (position 5).
    function = parsed(ctx, SCATTERED)
    skeleton = Skeleton(function.body.block)
    u_1 = offload(function, PrefetchOp, "u")
    w_1 = offload(function, PrefetchOp, "w")
    assert isinstance(u_1, PrefetchOp)
    assert isinstance(w_1, PrefetchOp)
    positions = offload_positions(
        skeleton, {u_1: At(3), w_1: At(4)}, fusion_of(function)
    )
    named = {
        f"{op.name.removeprefix('hyperoffload.')} {op.operands[0].name_hint}": at
        for op, at in positions.items()
    }
    assert named == {
        "prefetch u": (3, Rank.PREFETCH),
        "prefetch w": (4, Rank.PREFETCH),
        "store b": (4, Rank.STORE),
        "detach m": (3, Rank.DETACH),
        "detach u": (4, Rank.DETACH),
        "detach w": (5, Rank.DETACH),
        "detach b": (5, Rank.DETACH),
    }


def test_arrange_puts_each_offload_op_by_its_anchor(ctx: Context):
    # As above; at one position stores come before detaches, detaches
    # before prefetches.
    function = parsed(ctx, SCATTERED)
    u_1 = offload(function, PrefetchOp, "u")
    w_1 = offload(function, PrefetchOp, "w")
    assert isinstance(u_1, PrefetchOp)
    assert isinstance(w_1, PrefetchOp)
    arrange(function.body.block, {u_1: At(3), w_1: At(4)}, fusion_of(function))
    verify_module(module_of(function))
    assert body(function) == [
        f"%m = arith.mulf %x, %x : {M}",
        f"%v = tensor.collapse_shape %m [[0 : i64, 1 : i64]] : {M} into {T}",
        f"%a = arith.mulf %v, %v : {T}",
        f"hyperoffload.detach %m : {M}",
        f"%u_1 = hyperoffload.prefetch %u : {R} -> {T}",
        f"%b = arith.mulf %a, %u_1 : {T}",
        f"%b_remote = hyperoffload.store %b : {T} -> {R}",
        f"hyperoffload.detach %u_1 : {T}",
        f"%w_1 = hyperoffload.prefetch %w : {R} -> {T}",
        f"%r = arith.mulf %b, %w_1 : {T}",
        f"hyperoffload.detach %w_1 : {T}",
        f"hyperoffload.detach %b : {T}",
        f"func.return %r : {T}",
    ]


# Two fetches read by the same op (%r, skeleton op 2).
TWO_FETCHES = f"""func.func @f(%x: {T}, %w: {R}, %u: {R}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %w_1 = hyperoffload.prefetch %w : {R} -> {T}
  %u_1 = hyperoffload.prefetch %u : {R} -> {T}
  %s = arith.addf %w_1, %u_1 : {T}
  %r = arith.mulf %b, %s : {T}
  hyperoffload.detach %w_1 : {T}
  hyperoffload.detach %u_1 : {T}
  func.return %r : {T}
}}"""


def test_prefetches_at_one_position_keep_the_order_given(ctx: Context):
    # Both placed at position 0: in the order of the mapping (the order in
    # which the caller lists them), whatever their order in the body.
    for order in (("w", "u"), ("u", "w")):
        function = parsed(ctx, TWO_FETCHES)
        fetches = [offload(function, PrefetchOp, name) for name in order]
        positions = {f: At(0) for f in fetches if isinstance(f, PrefetchOp)}
        arrange(function.body.block, positions, fusion_of(function))
        lines = body(function)
        assert [line.split(" = ")[0] for line in lines[:2]] == [
            f"%{name}_1" for name in order
        ]
        assert lines[2] == f"%a = arith.mulf %x, %x : {T}"


# At position 2 (before %r): the store of %b (made by op 1), the detach of
# %a (last read by op 1), the prefetch of %w (read by %r) and the detach of
# a fetched copy nobody reads (%u_1), which cannot go before its prefetch.
ALL_RANKS = f"""func.func @f(%x: {T}, %w: {R}, %u: {R}) -> {T} {{
  %u_1 = hyperoffload.prefetch %u : {R} -> {T}
  hyperoffload.detach %u_1 : {T}
  %w_1 = hyperoffload.prefetch %w : {R} -> {T}
  %a = arith.mulf %x, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %r = arith.mulf %b, %w_1 : {T}
  %b_remote = hyperoffload.store %b : {T} -> {R}
  hyperoffload.detach %a : {T}
  hyperoffload.detach %w_1 : {T}
  func.return %r : {T}
}}"""


def test_rank_orders_the_offload_ops_at_one_position(ctx: Context):
    assert sorted(Rank, reverse=True) == [
        Rank.DETACH_AFTER_PREFETCH,
        Rank.PREFETCH,
        Rank.DETACH,
        Rank.STORE,
    ]
    function = parsed(ctx, ALL_RANKS)
    u_1 = offload(function, PrefetchOp, "u")
    w_1 = offload(function, PrefetchOp, "w")
    assert isinstance(u_1, PrefetchOp)
    assert isinstance(w_1, PrefetchOp)
    arrange(function.body.block, {u_1: At(2), w_1: At(2)}, fusion_of(function))
    verify_module(module_of(function))
    assert body(function) == [
        f"%a = arith.mulf %x, %x : {T}",
        f"%b = arith.mulf %a, %a : {T}",
        f"%b_remote = hyperoffload.store %b : {T} -> {R}",
        f"hyperoffload.detach %a : {T}",
        f"%u_1 = hyperoffload.prefetch %u : {R} -> {T}",
        f"%w_1 = hyperoffload.prefetch %w : {R} -> {T}",
        f"hyperoffload.detach %u_1 : {T}",
        f"%r = arith.mulf %b, %w_1 : {T}",
        f"hyperoffload.detach %w_1 : {T}",
        f"func.return %r : {T}",
    ]


def test_reorder_sorts_each_position_by_rank(ctx: Context):
    # reorder alone, with positions given in the reverse of rank order: all
    # four at position 2, the last detach at position 3.
    function = parsed(ctx, ALL_RANKS)
    skeleton = Skeleton(function.body.block)
    u_1 = offload(function, PrefetchOp, "u")
    w_1 = offload(function, PrefetchOp, "w")
    positions: dict[Operation, tuple[At, Rank]] = {
        offload(function, DetachOp, "u"): (At(2), Rank.DETACH_AFTER_PREFETCH),
        u_1: (At(2), Rank.PREFETCH),
        offload(function, DetachOp, "a"): (At(2), Rank.DETACH),
        offload(function, StoreOp, "b"): (At(2), Rank.STORE),
        w_1: (At(2), Rank.PREFETCH),
        offload(function, DetachOp, "w"): (At(3), Rank.DETACH),
    }
    reorder(skeleton, positions)
    assert [
        op.name.removeprefix("hyperoffload.") for op in function.body.block.ops
    ] == [
        "arith.mulf",
        "arith.mulf",
        "store",
        "detach",
        "prefetch",
        "prefetch",
        "detach",
        "arith.mulf",
        "detach",
        "func.return",
    ]
    ops = list(function.body.block.ops)
    assert ops[4:6] == [u_1, w_1]  # equal ranks: in the order of the mapping
