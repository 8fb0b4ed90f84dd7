"""
Structured `linalg` ops (`linalg.generic` and every named op, seen as a
generic by `semantics.linalg.as_structured`) as torch operations over
their iteration domain. Each operand is read through its indexing map as a
view that broadcasts to the domain (a permutation, unit dimensions, a
constant index; a gather for other affine maps), and the body runs on whole
tensors:

- all loops parallel: the body runs once; a result that only moves its input
  (a transpose, a broadcast) is a view of it, no copy;
- a contraction (the body multiply-accumulates two inputs, each maybe
  extended: `extf`, `mulf`, `addf`) is one `torch.einsum` in the inputs'
  dtype (bf16 inputs run as bf16 GEMMs), its result cast to the accumulator's;
- a reduction whose body combines the accumulator with a value computed
  from the inputs alone (`addf`, `maximumf`, ...) computes that value over
  the whole domain and reduces it with `torch.sum`, `torch.amax`, ...;
- any other reduction runs the body once per point of the reduction loops,
  in lexicographic order, vectorised over the parallel loops, as the
  numeric evaluator does.

```mlir
%mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
} -> tensor<4x5xf32>
// z + torch.einsum("ik,kj->ij", a, b)
```

Floating-point order: einsum and `torch.sum` add in another order than the
numeric evaluator's loop (pairwise, blocked), so f32 results differ from it
by rounding (relative 1e-6 per term), and a bf16 `addf` reduction
accumulates in f32 where the loop rounds to bf16 at each step. A result of
a multi-result reduction that nothing reads is not computed (its init is
returned): torch-mlir's `max` reductions carry an unused argmax.
"""

import itertools
import math
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineMap,
)

from hyperoffload.evaluators.semantics.linalg import (
    Structured,
    affine,
    as_structured,
    loop_ranges,
)
from hyperoffload.evaluators.torch.backend import TORCH
from hyperoffload.evaluators.torch.ops import BODY_IMPLS, IMPLS
from hyperoffload.evaluators.torch.registry import Scope
from hyperoffload.evaluators.torch.tensor import materialised
from hyperoffload.evaluators.torch.values import Fail, is_lazy, torch_dtype

__all__ = ["Read", "StructuredOp", "analyse", "run_structured"]

Tensor = torch.Tensor

Read = Callable[[SSAValue], Tensor]
"""The value of an operand, or of a value defined outside a body that the body reads."""

_MAX_DOMAIN_GROWTH = 4
"""A reduction is computed over its whole domain only if that is at most this
many times its largest operand (else point by point): a body that multiplies
broadcast operands would otherwise materialise their outer product."""


def _grids(ranges: Sequence[int], device: torch.device) -> list[Tensor]:
    """The index of each loop, shaped to broadcast over the domain."""
    rank = len(ranges)
    return [
        torch.arange(r, device=device).reshape(
            [r if k == d else 1 for k in range(rank)]
        )
        for d, r in enumerate(ranges)
    ]


def _positions(indexing_map: AffineMap) -> list[int] | None:
    """The loop each result names, if every result is a distinct loop."""
    positions = [
        e.position for e in indexing_map.results if isinstance(e, AffineDimExpr)
    ]
    if len(positions) != len(indexing_map.results) or len(set(positions)) != len(
        positions
    ):
        return None
    return positions


def _is_simple(indexing_map: AffineMap) -> bool:
    """Every result a distinct loop or a constant: the operand reads as a view."""
    dims = [e for e in indexing_map.results if isinstance(e, AffineDimExpr)]
    constants = [e for e in indexing_map.results if isinstance(e, AffineConstantExpr)]
    return len(dims) + len(constants) == len(indexing_map.results) and len(
        {e.position for e in dims}
    ) == len(dims)


def _domain_view(
    tensor: Tensor, indexing_map: AffineMap, grids: Callable[[], list[Tensor]]
) -> Tensor:
    """`tensor` read through `indexing_map`: broadcastable to the domain (rank = loops)."""
    rank = indexing_map.num_dims
    if not indexing_map.results:
        return tensor  # a scalar (or 0-d tensor) broadcasts as it is
    if not _is_simple(indexing_map):
        index = tuple(affine(TORCH, e, grids()) for e in indexing_map.results)
        return tensor[index]
    view = tensor
    for k in reversed(range(len(indexing_map.results))):
        expr = indexing_map.results[k]
        if isinstance(expr, AffineConstantExpr):
            view = view.select(k, expr.value)
    positions = [
        e.position for e in indexing_map.results if isinstance(e, AffineDimExpr)
    ]
    order = sorted(range(len(positions)), key=positions.__getitem__)
    if order != list(range(len(order))):
        view = view.permute(order)
    present = set(positions)
    for d in range(rank):
        if d not in present:
            view = view.unsqueeze(d)
    return view


def _to_output(
    value: Tensor, indexing_map: AffineMap, ranges: Sequence[int]
) -> Tensor | None:
    """
    A value over the domain (size 1 along the loops `indexing_map` drops) in
    the output's layout; None unless every result of the map is a distinct
    loop or the constant 0 (a unit dimension, as a `keepdim` reduction writes).
    """
    results = indexing_map.results
    positions = [e.position for e in results if isinstance(e, AffineDimExpr)]
    units = [
        k
        for k, e in enumerate(results)
        if isinstance(e, AffineConstantExpr) and e.value == 0
    ]
    if len(positions) + len(units) != len(results) or len(set(positions)) != len(
        positions
    ):
        return None
    rank = len(ranges)
    if value.dim() == 0:
        value = value.reshape([1] * rank)
    dropped = [d for d in range(rank) if d not in positions]
    if any(value.shape[d] != 1 for d in dropped):
        return None
    full = value.expand([1 if d in dropped else ranges[d] for d in range(rank)])
    if dropped:
        full = full.squeeze(tuple(dropped))
    kept = sorted(positions)
    order = [kept.index(p) for p in positions]
    if order != list(range(len(order))):
        full = full.permute(order)
    for k in units:
        full = full.unsqueeze(k)
    return full


@dataclass
class _Body:
    """Runs the ops of a body on tensors over the domain."""

    scope: Scope
    block: Block
    read: Read
    env: dict[SSAValue, Tensor]

    def value(self, value: SSAValue) -> Tensor:
        found = self.env.get(value)
        return found if found is not None else self.read(value)

    def run(self, skip: frozenset[Operation] = frozenset()) -> list[Tensor]:
        """Run every op but those in `skip`; the yielded values (none if some are skipped)."""
        for op in self.block.ops:
            if op is self.block.last_op:
                return [] if skip else [self.value(v) for v in op.operands]
            if op in skip:
                continue
            impl = BODY_IMPLS.get(op.name)
            if impl is None:
                raise Fail(f"'{op.name}' in a linalg body is not supported")
            results = impl(self.scope, op, [self.value(v) for v in op.operands])
            for result, tensor in zip(op.results, results, strict=True):
                self.env[result] = _cast(tensor, result.type)
        raise Fail("a linalg body without a terminator")


def _cast(tensor: Tensor, type_: Attribute) -> Tensor:
    dtype = torch_dtype(type_)
    return tensor if tensor.dtype == dtype else tensor.to(dtype)


def _depends_on_outputs(spec: Structured) -> frozenset[Operation]:
    """The body ops that read, directly or not, an output block argument."""
    tainted: set[SSAValue] = set(spec.body.args[len(spec.inputs) :])
    ops: set[Operation] = set()
    for op in spec.body.ops:
        if any(v in tainted for v in op.operands):
            ops.add(op)
            tainted.update(op.results)
    return frozenset(ops)


def is_view(spec: Structured) -> bool:
    """Whether the op only moves its inputs (its results are views of them, no kernel)."""
    if not all(spec.parallel) or len(spec.body.ops) != 1:
        return False
    yielded = next(iter(spec.body.ops)).operands
    inputs = spec.body.args[: len(spec.inputs)]
    return (
        all(isinstance(v, BlockArgument) and v in inputs for v in yielded)
        and all(_is_simple(m) for m in spec.maps[: len(spec.inputs)])
        and all(
            (p := _positions(m)) is not None and len(p) == m.num_dims
            for m in spec.maps[len(spec.inputs) :]
        )
    )


@dataclass(frozen=True)
class _Contraction:
    """`out + a * b` over two inputs, each maybe extended first."""

    factors: tuple[int, int]
    extended: bool


def _block_input(value: SSAValue, spec: Structured) -> tuple[int, bool] | None:
    """(input index, extended) if `value` is an input block argument, maybe `extf`'d."""
    extended = False
    owner = value.owner
    if isinstance(owner, Operation) and owner.name == "arith.extf":
        value, extended = owner.operands[0], True
    if (
        isinstance(value, BlockArgument)
        and value.owner is spec.body
        and value.index < len(spec.inputs)
    ):
        return value.index, extended
    return None


def _as_contraction(spec: Structured) -> _Contraction | None:
    body = list(spec.body.ops)
    if len(spec.outputs) != 1 or len(body[-1].operands) != 1:
        return None
    add = body[-1].operands[0].owner
    if not isinstance(add, Operation) or add.name != "arith.addf":
        return None
    accumulator = spec.body.args[len(spec.inputs)]
    if accumulator not in add.operands:
        return None
    product = add.operands[1] if add.operands[0] is accumulator else add.operands[0]
    mul = product.owner
    if not isinstance(mul, Operation) or mul.name != "arith.mulf":
        return None
    factors = [_block_input(v, spec) for v in mul.operands]
    if factors[0] is None or factors[1] is None:
        return None
    casts = {
        v.owner
        for v in mul.operands
        if v.owner is not mul and isinstance(v.owner, Operation)
    }
    if set(body) != {add, mul, body[-1], *casts}:
        return None
    if factors[0][1] != factors[1][1]:
        return None
    if any(_positions(m) is None for m in spec.maps):
        return None
    return _Contraction((factors[0][0], factors[1][0]), factors[0][1])


def _einsum(
    spec: Structured, contraction: _Contraction, ins: list[Tensor], init: Tensor
) -> Tensor:
    letters = string.ascii_letters

    def subscripts(indexing_map: AffineMap) -> str:
        return "".join(letters[p] for p in _positions(indexing_map) or [])

    i, j = contraction.factors
    a, b = ins[i], ins[j]
    if a.dtype != b.dtype or not contraction.extended:
        a, b = a.to(init.dtype), b.to(init.dtype)
    equation = (
        f"{subscripts(spec.maps[i])},{subscripts(spec.maps[j])}"
        f"->{subscripts(spec.maps[len(spec.inputs)])}"
    )
    product = torch.einsum(equation, a, b).to(init.dtype)
    return product if is_lazy(init) else init + product


_REDUCERS: dict[str, Callable[[Tensor, tuple[int, ...]], Tensor]] = {
    "arith.addf": lambda x, dims: torch.sum(x, dims, keepdim=True, dtype=x.dtype),
    "arith.addi": lambda x, dims: torch.sum(x, dims, keepdim=True, dtype=x.dtype),
    "arith.maximumf": lambda x, dims: torch.amax(x, dims, keepdim=True),
    "arith.minimumf": lambda x, dims: torch.amin(x, dims, keepdim=True),
    "arith.maxsi": lambda x, dims: torch.amax(x, dims, keepdim=True),
    "arith.minsi": lambda x, dims: torch.amin(x, dims, keepdim=True),
    "arith.ori": lambda x, dims: torch.any(x, dims, keepdim=True),
    "arith.andi": lambda x, dims: torch.all(x, dims, keepdim=True),
}
"""How a combining op reduces a value along the reduction loops."""


def _reducible(dtype: torch.dtype, combine: str) -> bool:
    if combine in ("arith.ori", "arith.andi"):
        return dtype == torch.bool
    return dtype != torch.bool


def _combiners(
    op: Operation, spec: Structured, tainted: frozenset[Operation]
) -> list[tuple[Operation, SSAValue] | None] | None:
    """
    For each output: (combining op, value combined) if its yield combines its
    accumulator with a value computed from the inputs alone; None for an
    output nothing reads. None if some read output is not of that form.
    """
    yielded = list(spec.body.ops)[-1].operands
    found: list[tuple[Operation, SSAValue] | None] = []
    for k, value in enumerate(yielded):
        if not op.results[k].uses:
            found.append(None)
            continue
        combine = value.owner
        accumulator = spec.body.args[len(spec.inputs) + k]
        if (
            not isinstance(combine, Operation)
            or combine.name not in _REDUCERS
            or accumulator not in combine.operands
            or len(combine.operands) != 2
        ):
            return None
        other = (
            combine.operands[1]
            if combine.operands[0] is accumulator
            else combine.operands[0]
        )
        if isinstance(other.owner, Operation) and other.owner in tainted:
            return None
        if other in spec.body.args[len(spec.inputs) :]:
            return None
        found.append((combine, other))
    return found


def _combined(
    scope: Scope,
    spec: Structured,
    combiners: list[tuple[Operation, SSAValue] | None],
    tainted: frozenset[Operation],
    body: _Body,
    outs: list[Tensor],
    ranges: list[int],
    grids: Callable[[], list[Tensor]],
) -> list[Tensor] | None:
    body.run(skip=tainted)
    reduction = tuple(d for d, p in enumerate(spec.parallel) if not p)
    out_maps = spec.maps[len(spec.inputs) :]
    results: list[Tensor] = []
    for k, combiner in enumerate(combiners):
        if combiner is None:
            results.append(outs[k])
            continue
        combine, value = combiner
        x = body.value(value).to(scope.device).expand(ranges)
        if not _reducible(x.dtype, combine.name):
            return None
        reduced = _REDUCERS[combine.name](x, reduction)
        init = _domain_view(materialised(outs[k], scope.device), out_maps[k], grids)
        combined = IMPLS[combine.name](scope, combine, [init, reduced])
        placed = _to_output(combined[0].to(outs[k].dtype), out_maps[k], ranges)
        if placed is None:
            return None
        results.append(placed)
    return results


def _sequential(
    scope: Scope,
    spec: Structured,
    body: _Body,
    ins: list[Tensor],
    outs: list[Tensor],
    ranges: list[int],
    grids: Callable[[], list[Tensor]],
) -> list[Tensor]:
    """The body once per point of the reduction loops, vectorised over the others."""
    in_maps, out_maps = spec.maps[: len(ins)], spec.maps[len(ins) :]
    views = [_domain_view(t, m, grids) for t, m in zip(ins, in_maps, strict=True)]
    accumulators = [
        _domain_view(materialised(t, scope.device), m, grids)
        for t, m in zip(outs, out_maps, strict=True)
    ]
    reduction = [d for d, p in enumerate(spec.parallel) if not p]
    inputs_args = spec.body.args[: len(ins)]
    output_args = spec.body.args[len(ins) :]
    parallel_grids = grids() if scope.loop_indices else []
    for point in itertools.product(*(range(ranges[d]) for d in reduction)):
        for arg, view in zip(inputs_args, views, strict=True):
            for d, i in zip(reduction, point, strict=True):
                if view.dim() > 0 and view.shape[d] > 1:
                    view = view.narrow(d, i, 1)
            body.env[arg] = view
        for arg, accumulator in zip(output_args, accumulators, strict=True):
            body.env[arg] = accumulator
        if parallel_grids:
            indices = list(parallel_grids)
            for d, i in zip(reduction, point, strict=True):
                indices[d] = torch.tensor(i, dtype=torch.int64)
            scope.loop_indices = indices
        yielded = body.run()
        accumulators = [y.to(t.dtype) for y, t in zip(yielded, outs, strict=True)]
    results: list[Tensor] = []
    for accumulator, m, t in zip(accumulators, out_maps, outs, strict=True):
        placed = _to_output(accumulator.to(scope.device), m, ranges)
        if placed is None:
            raise Fail(f"unsupported output indexing map {m} of a reduction")
        results.append(placed.to(t.dtype))
    return results


def _parallel(
    scope: Scope,
    spec: Structured,
    body: _Body,
    outs: list[Tensor],
    ranges: list[int],
    grids: Callable[[], list[Tensor]],
) -> list[Tensor]:
    yielded = body.run()
    results: list[Tensor] = []
    for value, m, init in zip(
        yielded, spec.maps[len(spec.inputs) :], outs, strict=True
    ):
        value = value.to(device=scope.device, dtype=init.dtype)
        positions = _positions(m)
        if positions is not None and len(positions) == len(ranges):
            full = value.expand(ranges)
            if positions != sorted(positions):
                full = full.permute(positions)
            results.append(full)
            continue
        out = materialised(init, scope.device).clone()
        index = tuple(
            torch.broadcast_to(affine(TORCH, e, grids()), ranges) for e in m.results
        )
        out[index] = value.expand(ranges)
        results.append(out)
    return results


@dataclass(frozen=True)
class StructuredOp:
    """A structured op, seen as a generic, with what running it needs to know."""

    op: Operation
    spec: Structured
    contraction: _Contraction | None
    combiners: list[tuple[Operation, SSAValue] | None] | None
    tainted: frozenset[Operation]
    """The body ops that read an accumulator."""
    uses_index: bool
    view: bool
    """Its results are views of its inputs (no kernel): see `is_view`."""


def analyse(op: Operation) -> StructuredOp | None:
    """`op` analysed for `run_structured`; None if it is not a structured op."""
    spec = as_structured(op)
    if spec is None:
        return None
    tainted = _depends_on_outputs(spec)
    reduction = not all(spec.parallel)
    return StructuredOp(
        op,
        spec,
        _as_contraction(spec) if reduction else None,
        _combiners(op, spec, tainted) if reduction else None,
        tainted,
        any(o.name == "linalg.index" for o in spec.body.ops),
        is_view(spec),
    )


def run_structured(scope: Scope, structured: StructuredOp, read: Read) -> list[Tensor]:
    """The results of a structured op (`analyse`d)."""
    op, spec = structured.op, structured.spec
    if len(op.results) != len(spec.outputs):
        raise Fail("only tensor semantics are supported")
    ins = [read(v) for v in spec.inputs]
    ins = [materialised(t, scope.device) for t in ins]
    ins = [t if t.dim() == 0 else t.to(scope.device) for t in ins]
    outs = [read(v) for v in spec.outputs]
    ranges = loop_ranges(TORCH, spec.maps, [*ins, *outs])
    cached: list[list[Tensor]] = []

    def grids() -> list[Tensor]:
        if not cached:
            cached.append(_grids(ranges, scope.device))
        return cached[0]

    saved = scope.loop_indices
    scope.loop_indices = grids() if structured.uses_index else []
    try:
        return _run(scope, structured, read, ins, outs, ranges, grids)
    finally:
        scope.loop_indices = saved


def _run(
    scope: Scope,
    structured: StructuredOp,
    read: Read,
    ins: list[Tensor],
    outs: list[Tensor],
    ranges: list[int],
    grids: Callable[[], list[Tensor]],
) -> list[Tensor]:
    spec = structured.spec
    in_maps = spec.maps[: len(ins)]
    env: dict[SSAValue, Tensor] = {
        arg: _domain_view(t, m, grids)
        for arg, t, m in zip(spec.body.args, ins, in_maps, strict=False)
    }
    body = _Body(scope, spec.body, read, dict(env))
    if all(spec.parallel):
        for arg, t, m in zip(
            spec.body.args[len(ins) :], outs, spec.maps[len(ins) :], strict=True
        ):
            if arg.uses:
                body.env[arg] = _domain_view(materialised(t, scope.device), m, grids)
        return _parallel(scope, spec, body, outs, ranges, grids)
    contraction = structured.contraction
    if contraction is not None and outs[0].dtype.is_floating_point:
        return [_einsum(spec, contraction, ins, outs[0])]
    combiners = structured.combiners
    largest = max((t.numel() for t in [*ins, *outs]), default=1)
    if combiners is not None and math.prod(ranges) <= _MAX_DOMAIN_GROWTH * max(
        largest, 1
    ):
        results = _combined(
            scope, spec, combiners, structured.tainted, body, outs, ranges, grids
        )
        if results is not None:
            return results
        body.env = dict(env)
    return _sequential(scope, spec, body, ins, outs, ranges, grids)
