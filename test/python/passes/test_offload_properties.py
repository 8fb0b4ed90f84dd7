"""
Properties on random straight-line programs: offloading any value across any
gap between two of its uses verifies, stripping the offload ops gives back
the original program, and a detach placed before a use is always rejected.
"""

from dataclasses import dataclass, field
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.strip import StripPass

T = "tensor<4xf32>"
REMOTE = f"!hyperoffload.remote<{T}>"


@dataclass
class Program:
    """`ops[i] = (a, b)`: `%v{i} = arith.addf a, b`; the last value is returned."""

    num_args: int
    ops: list[tuple[str, str]]
    remote_args: set[int] = field(default_factory=set[int])

    @property
    def result(self) -> str:
        return f"%v{len(self.ops) - 1}"

    def events(self, value: str) -> list[int]:
        """Positions where `value` is defined (-1 for arguments) or used;
        the return is at position `len(ops)`."""
        defined = -1 if value.startswith("%a") else int(value[2:])
        uses = [i for i, (a, b) in enumerate(self.ops) if value in (a, b)]
        if value == self.result:
            uses.append(len(self.ops))
        return sorted({defined, *uses})

    def signature(self, remote_types: bool) -> str:
        args: list[str] = []
        for i in range(self.num_args):
            if i not in self.remote_args:
                args.append(f"%a{i}: {T}")
            elif remote_types:
                args.append(f"%a{i}: {REMOTE}")
            else:
                args.append(
                    f"%a{i}: {T} {{hyperoffload.tier = #hyperoffload.tier<remote>}}"
                )
        return f"func.func @f({', '.join(args)}) -> {T} {{"

    def text(self) -> str:
        lines = [self.signature(remote_types=False)]
        lines += [
            f"  %v{i} = arith.addf {a}, {b} : {T}" for i, (a, b) in enumerate(self.ops)
        ]
        lines += [f"  func.return {self.result} : {T}", "}"]
        return "\n".join(lines)


@st.composite
def programs(draw: st.DrawFn) -> Program:
    num_args = draw(st.integers(1, 3))
    ops: list[tuple[str, str]] = []
    for i in range(draw(st.integers(1, 8))):
        available = [f"%a{j}" for j in range(num_args)] + [f"%v{j}" for j in range(i)]
        ops.append((draw(st.sampled_from(available)), draw(st.sampled_from(available))))
    remote = draw(st.sets(st.integers(0, num_args - 1)))
    program = Program(num_args, ops, remote)
    # Remote arguments must be read somewhere, or nothing prefetches them.
    program.remote_args = {i for i in remote if len(program.events(f"%a{i}")) > 1}
    return program


@dataclass
class Offload:
    """Park `value` outside HBM between its events `before` and `after`."""

    value: str
    before: int
    after: int


@st.composite
def offloads(draw: st.DrawFn, program: Program) -> list[Offload]:
    chosen: list[Offload] = []
    values = [f"%a{i}" for i in range(program.num_args) if i not in program.remote_args]
    values += [f"%v{i}" for i in range(len(program.ops))]
    for value in values:
        events = program.events(value)
        if len(events) < 2 or not draw(st.booleans()):
            continue
        k = draw(st.integers(0, len(events) - 2))
        chosen.append(Offload(value, events[k], events[k + 1]))
    return chosen


def offloaded_text(
    program: Program, plan: list[Offload], early_detach: bool = False
) -> str:
    """The program with store/detach/prefetch for `plan` and every remote argument.
    With `early_detach`, each detach that follows a use goes right before it."""
    n = len(program.ops)
    before: dict[int, list[str]] = {i: [] for i in range(-1, n + 1)}
    after: dict[int, list[str]] = {i: [] for i in range(-1, n + 1)}
    renamed: list[tuple[str, int, str]] = []  # (value, from position, new name)
    for i in sorted(program.remote_args):
        arg = f"%a{i}"
        first = program.events(arg)[1]
        before[first].append(
            f"  {arg}_d = hyperoffload.prefetch {arg} : {REMOTE} -> {T}"
        )
        renamed.append((arg, first, f"{arg}_d"))
    for o in plan:
        defined = program.events(o.value)[0]
        after[defined].append(
            f"  {o.value}_h = hyperoffload.store {o.value} : {T} -> {REMOTE}"
        )
        detach = f"  hyperoffload.detach {o.value} : {T}"
        if early_detach and o.before != defined:
            before[o.before].append(detach)
        else:
            after[o.before].append(detach)
        prefetch = (
            f"  {o.value}_r = hyperoffload.prefetch {o.value}_h : {REMOTE} -> {T}"
        )
        before[o.after].append(prefetch)
        renamed.append((o.value, o.after, f"{o.value}_r"))

    def name(value: str, position: int) -> str:
        for original, start, new in renamed:
            if original == value and position >= start:
                return new
        return value

    lines = [program.signature(remote_types=True), *after[-1]]
    for i, (a, b) in enumerate(program.ops):
        lines += before[i]
        lines.append(f"  %v{i} = arith.addf {name(a, i)}, {name(b, i)} : {T}")
        # stores before detaches: a value stored right after its definition
        lines += sorted(after[i], key=lambda line: "detach" in line)
    lines += before[n]
    lines += [f"  func.return {name(program.result, n)} : {T}", "}"]
    return "\n".join(lines)


def _print(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.data())
def test_offloaded_program_verifies_and_strips_to_the_original(
    data: st.DataObject,
) -> None:
    ctx = make_context()
    program = data.draw(programs())
    plan = data.draw(offloads(program))
    offloaded = parse_mlir(ctx, offloaded_text(program, plan), "offloaded.mlir")
    verify_module(offloaded)
    StripPass().apply(ctx, offloaded)
    verify_module(offloaded)
    original = parse_mlir(ctx, program.text(), "original.mlir")
    assert _print(offloaded) == _print(original)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.data())
def test_a_detach_before_a_use_is_rejected(data: st.DataObject) -> None:
    ctx = make_context()
    program = data.draw(programs())
    plan = data.draw(offloads(program))
    defined = {o.value: program.events(o.value)[0] for o in plan}
    if all(o.before == defined[o.value] for o in plan):
        return  # every detach follows a definition, not a use: nothing to break
    text = offloaded_text(program, plan, early_detach=True)
    with pytest.raises(VerifyException, match="detach"):
        verify_module(parse_mlir(ctx, text, "early.mlir"))
