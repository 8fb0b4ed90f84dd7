"""
Write a plan into the IR: the one place where planning touches a function.

Each value plan becomes its ops: a store right after the producer, a detach
after the use before each gap (`lazy`: right before the fetch), a prefetch
before the op its plan names (`ValuePlan.fetch_op`), and the uses after each
gap rewired to that gap's prefetch; a value computed again gets a clone of
its producer right before the use after each gap instead (a plain upstream
op: the program computes the same bits). A tagged argument left in its tier
becomes a remote argument; one the plan keeps in HBM is tagged `hbm`. A plan
that compresses (`ValuePlan.compress`) writes `{compress = "int8"}` on its
store and prefetches.

A plan that parks `%h` over its gap between ops 1 and 4 writes
```mlir
%h = arith.mulf %x, %x : tensor<256xf32>
%h_remote = hyperoffload.store %h : tensor<256xf32> -> !hyperoffload.remote<tensor<256xf32>>
%a = arith.addf %h, %x : tensor<256xf32>
hyperoffload.detach %h : tensor<256xf32>
...
%h_1 = hyperoffload.prefetch %h_remote : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>
%r = arith.mulf %a, %h_1 : tensor<256xf32>
```

An expert placement (`hyperoffload.planning.experts`) is written here too
(`write_expert_fetches`): a cold expert's weights become a remote argument,
fetched at the top of its branch and detached at its end
```mlir
%y1 = scf.if %r1 -> (tensor<1x64xf32>) {
  %w1_1 = hyperoffload.prefetch %w1 : !hyperoffload.remote<tensor<64x64xf32>> -> tensor<64x64xf32>
  %m1 = linalg.matmul ins(%a, %w1_1 : ...) ...
  hyperoffload.detach %w1_1 : tensor<64x64xf32>
```
or, fetched ahead of its router, marked `speculative` after the previous
layer's experts and detached after its own branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.dialects import scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, TensorType, UnknownLoc
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue, Use
from xdsl.rewriter import InsertPoint, Rewriter

from hyperoffload.analysis.fusion import Fusion
from hyperoffload.analysis.lifetimes import ValueInfo
from hyperoffload.analysis.moe_step import Key
from hyperoffload.dialects.hyperoffload import (
    EXPERT_PLAN_ATTR,
    TIER_ARG_ATTR,
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    Tier,
    TierAttr,
)
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.planning.planner import Plan, PlanError
from hyperoffload.planning.recipes import Recipe
from hyperoffload.planning.value_plan import ValuePlan


@dataclass(frozen=True)
class WrittenPlan:
    """What `write_plan` wrote."""

    prefetches: list[PrefetchOp]
    """The prefetches, in the order of the plan's gaps."""
    cloned: bool
    """Whether ops fused into later kernels were cloned (the kernels changed)."""


class _Placement:
    """Ops to insert around the original ops of a function body, then apply."""

    def __init__(self, ops: list[Operation], lazy: bool):
        self.ops = ops
        self.lazy = lazy
        self.position = {op: i for i, op in enumerate(ops)}
        self.before: dict[int, list[tuple[int, int, Operation]]] = {}
        self.after: dict[int, list[tuple[bool, int, Operation]]] = {}
        """Op index (-1: entry) -> (not first, order placed, op)."""

    def place_after(self, index: int, op: Operation, first: bool = False) -> None:
        """
        Insert `op` after op `index` (-1: at entry); those placed `first`
        (stores) before the others there, each group in the order placed.
        """
        ops = self.after.setdefault(max(index, -1), [])
        ops.append((not first, len(ops), op))

    def place_before(self, index: int, op: Operation, deadline: int = 0) -> None:
        """
        Insert `op` before op `index`; of those there, by `deadline` (a
        fetch: the use it serves), then in the order placed.
        """
        ops = self.before.setdefault(index, [])
        ops.append((deadline, len(ops), op))

    def holder(self, op: Operation) -> int | None:
        """Position of the original top-level op holding `op` (None for inserted ops)."""
        current: Operation | None = op
        while current is not None and current not in self.position:
            current = current.parent_op()
        return None if current is None else self.position[current]

    def uses_by_position(self, value: SSAValue) -> list[tuple[int, Use]]:
        """The uses of `value` in original ops, by the position of their holder."""
        held = [(self.holder(use.operation), use) for use in value.uses]
        return sorted(
            ((at, use) for at, use in held if at is not None), key=lambda e: e[0]
        )

    def apply(self, rewriter: Rewriter) -> None:
        """
        Insert the placed ops, each located at the op it serves (where it
        has no location of its own): a fetch at the use it is for, a store
        or a detach at the op it follows, so a diagnostic about it names a
        line of the source.
        """
        first = self.ops[0]
        for *_, op in sorted(self.after.get(-1, ())):
            _locate(op, first)
            rewriter.insert_op(op, InsertPoint.before(first))
        for index, op in enumerate(self.ops):
            for deadline, _, new in sorted(self.before.get(index, ())):
                served = deadline if index < deadline < len(self.ops) else index
                _locate(new, self.ops[served])
                rewriter.insert_op(new, InsertPoint.before(op))
            anchor = op
            for *_, new in sorted(self.after.get(index, ())):
                _locate(new, op)
                rewriter.insert_op(new, InsertPoint.after(anchor))
                anchor = new


def _locate(op: Operation, like: Operation) -> None:
    """Give `op`, where it has no location, the location of `like`."""
    if isinstance(op.location, UnknownLoc):
        op.location = like.location


def _rewire(uses: list[tuple[int, Use]], readers: list[tuple[int, SSAValue]]) -> None:
    """
    Each use at or after the position of a reader, and before the next
    reader's, reads that reader (one pass over the uses: linear, however many
    gaps a value has).
    """
    index = 0
    for at, use in uses:
        while index < len(readers) and readers[index][0] <= at:
            index += 1
        if index > 0:
            use.operation.operands[use.index] = readers[index - 1][1]


def _write_value(
    plan: ValuePlan,
    function: FuncOp,
    placement: _Placement,
    distance: int,
    offload_tier: Tier,
    limits: dict[tuple[int, int], int],
) -> list[PrefetchOp]:
    """
    Insert the store, detaches and prefetches of one value's plan (a fetch
    before the op `limits` gives its gap, where given: clones read it there,
    `_write_fused_reads`); its copy
    goes to the plan's tier (`ValuePlan.copy_tier`: the one chosen, else the
    written-back result's or the argument's own, else `offload_tier`), and an
    argument or result whose tier changed is tagged with it. Returns the
    prefetches, one per gap.
    """
    info = plan.info
    end = len(placement.ops)
    if plan.recompute:
        return []  # written by `_write_recomputations`
    current: SSAValue | None
    if plan.initially_out:  # a tagged argument becomes a remote copy
        index = function.args.index(info.value)  # type: ignore[arg-type]
        tensor = info.value.type
        assert isinstance(tensor, TensorType)
        tier = plan.copy_tier(offload_tier)
        remote = RemoteType(cast(TensorType[Attribute], tensor), tier)
        function.replace_argument_type(index, remote, Rewriter())
        if tier != info.tier:  # spilled: the caller finds it in `tier`
            function.arg_attrs = with_tier(function.arg_attrs, index, tier)
        handle: SSAValue = function.args[index]
        current = None
    else:
        store = StoreOp(info.value, plan.copy_tier(offload_tier), plan.compress)
        if info.value.name_hint:
            store.handle.name_hint = f"{info.value.name_hint}_remote"
        placement.place_after(info.producer, store, first=True)
        handle, current = store.handle, info.value
    uses = placement.uses_by_position(handle if current is None else current)
    if plan.write_back is not None:  # the caller gets the remote copy
        last = info.last_use_before(end - 1)  # the return
        placement.place_after(last, DetachOp(info.value))
        assert isinstance(placement.ops[-1], ReturnOp)
        _rewire(uses, [(end - 1, handle)])
        tier = plan.copy_tier(offload_tier)
        if tier != plan.write_back:  # spilled: the caller finds it in `tier`
            for position, result in enumerate(placement.ops[-1].operands):
                if result is handle:
                    function.res_attrs = with_tier(function.res_attrs, position, tier)
        return []
    prefetches: list[PrefetchOp] = []
    reads_from: list[int] = []  # where each fetched copy is read from
    for index, gap in enumerate(plan.gaps):
        reads_from.append(min(gap.before, limits.get((id(plan), index), end)))
        fetch_at = min(plan.fetch_op(index, distance), reads_from[-1])
        prefetch = PrefetchOp(handle, plan.compress)
        if info.value.name_hint:
            prefetch.result.name_hint = info.value.name_hint
        if current is not None:
            detach = DetachOp(current)
            if placement.lazy:
                placement.place_before(fetch_at, detach, gap.before)
            else:
                placement.place_after(gap.after, detach)
        placement.place_before(fetch_at, prefetch, gap.before)
        prefetches.append(prefetch)
        current = prefetch.result
    _rewire(
        uses, [(at, p.result) for at, p in zip(reads_from, prefetches, strict=True)]
    )
    # a copy brought back for the last time is released after its last use,
    # unless it stands for an untagged argument (in HBM at return for the caller)
    untagged_argument = info.producer < 0 and not plan.initially_out
    if (
        current is not None
        and plan.gaps
        and info.last_use < end - 1
        and not untagged_argument
    ):
        placement.place_after(info.last_use, DetachOp(current))
    return prefetches


def _write_recomputations(plans: list[ValuePlan], placement: _Placement) -> None:
    """
    Before the use after each gap of a recomputed value, clones of its
    recipe's ops (once per position, however many values share them); from
    there on, the uses of the value and of the ops fused into later kernels
    that read it read the clones.
    """
    groups: dict[int, list[Recipe]] = {}
    for plan in plans:
        if plan.recompute:
            for recipe in plan.recipes:
                groups.setdefault(recipe.at, []).append(recipe)
    readers: dict[SSAValue, list[tuple[int, SSAValue]]] = {}
    for at in sorted(groups):
        cloned: dict[SSAValue, SSAValue] = {}
        for index in sorted({op for recipe in groups[at] for op in recipe.ops}):
            original = placement.ops[index]
            clone = original.clone(value_mapper=dict(cloned))
            cloned.update(zip(original.results, clone.results, strict=True))
            placement.place_before(at, clone)
        for index in sorted({op for recipe in groups[at] for op in recipe.rewired}):
            for result in placement.ops[index].results:
                readers.setdefault(result, []).append((at, cloned[result]))
    for value, clones in readers.items():
        _rewire(placement.uses_by_position(value), clones)


def _write_fused_reads(
    plans: list[ValuePlan], placement: _Placement, fusion: Fusion
) -> dict[tuple[int, int], int]:
    """
    For each gap of a value moved out of HBM, the ops before it that read
    the value (through other such ops and views) and run in kernels after
    it: clones of them before each such kernel's first op in the gap (once
    per position); from there on, the uses of their results read the
    clones, and the clones read what the value's plan fetches. The
    originals run before the gap, in the kernels before it; the kernels
    after it run the same ops, on the fetched copy. Returns the op each
    such gap's fetch must come before (by plan identity and gap index).
    """
    groups: dict[int, set[int]] = {}
    limits: dict[tuple[int, int], int] = {}
    for plan in plans:
        if plan.recompute or plan.write_back is not None:
            continue
        for index, gap in enumerate(plan.gaps):
            chain = _FusedChain(placement.position, fusion, gap.before)
            for use in plan.info.value.uses:
                chain.roots(use.operation)
            for root, at in chain.starts(gap.after).items():
                ops = chain.up_to(gap.after, root)
                if ops:
                    groups.setdefault(at, set()).update(ops)
                    limit = limits.get((id(plan), index), at)
                    limits[id(plan), index] = min(limit, at)
    readers: dict[SSAValue, list[tuple[int, SSAValue]]] = {}
    for at in sorted(groups):
        cloned: dict[SSAValue, SSAValue] = {}
        for index in sorted(groups[at]):
            original = placement.ops[index]
            clone = original.clone(value_mapper=dict(cloned))
            cloned.update(zip(original.results, clone.results, strict=True))
            placement.place_before(at, clone, len(placement.ops))
            placement.position[clone] = at  # its reads rewired as if there
            for result in original.results:
                readers.setdefault(result, []).append((at, cloned[result]))
    for value, clones in readers.items():
        _rewire(placement.uses_by_position(value), clones)
    return limits


class _FusedChain:
    """
    The ops before `before` that read a value (through other such ops) and
    run in kernels from `before` on: fused ops, and the views between them.
    """

    def __init__(self, position: dict[Operation, int], fusion: Fusion, before: int):
        self.position = position
        self.fusion = fusion
        self.before = before
        self.found: dict[Operation, set[int]] = {}
        """Each op of the chain -> the roots from `before` on that run it."""
        self.first_reader: dict[int, int] = {}
        """Each root -> its kernel's first op from `before` on reading the chain."""
        self._seen: dict[Operation, set[int]] = {}

    def roots(self, op: Operation) -> set[int]:
        """The roots from `before` on that run `op` or what reads it (gathered)."""
        if op in self._seen:
            return self._seen[op]
        self._seen[op] = set()
        at = self.position.get(op)
        fused = op in self.fusion.absorbed
        if at is None or at >= self.before or not (fused or isinstance(op, VIEW_OPS)):
            return set()
        roots = {
            self.position[r]
            for r in self.fusion.roots_of.get(op, ())
            if self.position[r] >= self.before
        }
        for result in op.results:
            for use in result.uses:
                roots |= self.roots(use.operation) | self._reads_from(use.operation)
        if roots:
            self.found[op] = roots
        self._seen[op] = roots
        return roots

    def _reads_from(self, reader: Operation) -> set[int]:
        """
        The roots of `reader`'s kernels if it is from `before` on (it reads
        the chain there: a view in the chain is cloned too), each noting it.
        """
        at = self.position.get(reader)
        if at is None or at < self.before:
            return set()
        roots = {self.position[r] for r in self.fusion.roots_of.get(reader, (reader,))}
        for root in roots:
            self.first_reader[root] = min(self.first_reader.get(root, at), at)
        return roots

    def starts(self, after: int) -> dict[int, int]:
        """
        For each root found, where its ops in the gap after op `after` start:
        at its kernel's first op reading the chain, or earlier.
        """
        starts = {
            root: self.first_reader.get(root, root)
            for roots in self.found.values()
            for root in roots
        }
        for op, roots in self.found.items():
            at = self.position[op]
            if at > after:
                for root in roots:
                    starts[root] = min(starts[root], at)
        return starts

    def up_to(self, after: int, root: int) -> list[int]:
        """The positions of the ops found up to op `after` that `root` runs."""
        return [
            self.position[op]
            for op, roots in self.found.items()
            if root in roots and self.position[op] <= after
        ]


def with_tier(
    attrs: ArrayAttr[DictionaryAttr] | None, index: int, tier: Tier
) -> ArrayAttr[DictionaryAttr]:
    """Argument or result attributes with entry `index` tagged as living in `tier`."""
    assert attrs is not None  # a tagged argument or result has attributes
    entries = list(attrs.data)
    entries[index] = DictionaryAttr(
        {**entries[index].data, TIER_ARG_ATTR: TierAttr(tier)}
    )
    return ArrayAttr(entries)


def _place_in_hbm(function: FuncOp, placed: list[ValueInfo]) -> None:
    """Tag each argument of `placed` as living in HBM (the caller keeps it there)."""
    if not placed or function.arg_attrs is None:
        return
    arg_attrs = list(function.arg_attrs.data)
    for info in placed:
        index = function.args.index(info.value)  # type: ignore[arg-type]
        attrs = arg_attrs[index]
        assert isinstance(attrs, DictionaryAttr)
        arg_attrs[index] = DictionaryAttr(
            {**attrs.data, TIER_ARG_ATTR: TierAttr(Tier.HBM)}
        )
    function.arg_attrs = ArrayAttr(arg_attrs)


def write_plan(
    function: FuncOp,
    ops: list[Operation],
    plan: Plan,
    prefetch_distance: int,
    offload_tier: Tier,
    lazy: bool = False,
    fusion: Fusion | None = None,
) -> WrittenPlan:
    """
    Insert the ops of `plan` into `function`, whose top-level ops were `ops`
    when it was planned, and `fusion` their kernels (None: no value is moved
    over a gap before a kernel that runs ops fused into it from before the
    gap).
    """
    placement = _Placement(ops, lazy)
    # clones first: they copy the ops as planned, before offloads rewire them
    _write_recomputations(plan.values, placement)
    limits = (
        {} if fusion is None else _write_fused_reads(plan.values, placement, fusion)
    )
    prefetches = [
        prefetch
        for value_plan in plan.values
        for prefetch in _write_value(
            value_plan, function, placement, prefetch_distance, offload_tier, limits
        )
    ]
    placement.apply(Rewriter())
    _place_in_hbm(function, plan.placed)
    for position in plan.kept_results:  # the caller keeps it in HBM, as its argument
        function.res_attrs = with_tier(function.res_attrs, position, Tier.HBM)
    function.update_function_type()
    return WrittenPlan(prefetches, bool(limits))


def write_expert_fetches(
    function: FuncOp,
    arguments: dict[Key, list[int]],
    branches: dict[Key, scf.IfOp],
    hot: set[Key],
    ahead: set[Key],
    tier: Tier,
    record: DictionaryAttr,
) -> None:
    """
    Write an expert placement into `function`: each expert's weight
    `arguments` tagged `hbm` if `hot`, else retyped as remote copies in
    `tier` and fetched (`ahead`: before their router) for their expert's
    `branches`; `record` kept as the function's `hyperoffload.expert_plan`.
    """
    rewriter = Rewriter()
    for key, indices in sorted(arguments.items()):
        branch = branches.get(key)
        if branch is None:
            raise PlanError(
                diagnostic_at(function, f"expert {key[0]}.{key[1]} has no branch")
            )
        for index in indices:
            _check_read_in_branch(function.args[index], branch)
            if key not in hot:
                tensor = cast(TensorType[Attribute], function.args[index].type)
                remote = RemoteType(tensor, tier)
                function.replace_argument_type(index, remote, rewriter)
            where = Tier.HBM if key in hot else tier
            function.arg_attrs = with_tier(function.arg_attrs, index, where)
    for key in sorted(arguments):
        if key in hot:
            continue
        if key in ahead:
            _fetch_ahead(function, key, arguments[key], branches)
        else:
            _fetch_in_branch(function, arguments[key], branches[key])
    function.attributes[EXPERT_PLAN_ATTR] = record
    function.update_function_type()


def _check_read_in_branch(weight: BlockArgument, branch: scf.IfOp) -> None:
    for use in weight.uses:
        if not branch.true_region.is_ancestor(use.operation):
            raise PlanError(
                diagnostic_at(
                    use.operation,
                    f"'{use.operation.name}' reads the weights of the expert of "
                    "this scf.if outside its branch: an expert's weights are "
                    "read only in its `then` region",
                )
            )


def _fetch_in_branch(function: FuncOp, indices: list[int], branch: scf.IfOp) -> None:
    """
    Prefetch at the top of the branch, detach at its end (the branch is the
    expert's work; a reader's kernel may fuse into a later one of it).
    """
    block = branch.true_region.block
    terminator = block.last_op
    assert terminator is not None
    for index in indices:
        weight = function.args[index]
        prefetch = PrefetchOp(weight)
        prefetch.result.name_hint = weight.name_hint
        block.insert_op_before(prefetch, block.first_op)  # type: ignore[arg-type]
        _read_fetched(weight, prefetch)
        block.insert_op_before(DetachOp(prefetch.result), terminator)


def _fetch_ahead(
    function: FuncOp,
    key: Key,
    indices: list[int],
    branches: dict[Key, scf.IfOp],
) -> None:
    """
    A speculative prefetch after the previous layer's experts (at the entry
    for the first layer's), detached after the expert's own branch.
    """
    body = function.body.block
    layer = key[0]
    before = [b for k, b in branches.items() if k[0] < layer]
    for index in indices:
        weight = function.args[index]
        prefetch = PrefetchOp(weight, speculative=True)
        prefetch.result.name_hint = weight.name_hint
        _locate(prefetch, branches[key])
        if before:
            anchor = max(before, key=body.get_operation_index)
            body.insert_op_after(prefetch, _after_detaches(anchor))
        else:
            body.insert_op_before(prefetch, body.first_op)  # type: ignore[arg-type]
        _read_fetched(weight, prefetch)
        detach = DetachOp(prefetch.result)
        _locate(detach, branches[key])
        body.insert_op_after(detach, _after_detaches(branches[key]))


def _after_detaches(op: Operation) -> Operation:
    """`op`, or the last of the detaches that follow it (the previous layer's)."""
    while isinstance(op.next_op, DetachOp):
        op = op.next_op
    return op


def _read_fetched(weight: BlockArgument, prefetch: PrefetchOp) -> None:
    """Every use of `weight` but `prefetch` reads its fetched copy."""
    for use in list(weight.uses):
        if use.operation is not prefetch:
            use.operation.operands[use.index] = prefetch.result
