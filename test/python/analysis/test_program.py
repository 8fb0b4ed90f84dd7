"""
`Program`: the planned and reference programs of a module, each extracted
once and only when asked for. Hardware (inputs/round.toml): HBM 1 GB/s,
1 GFLOP/s, a remote link of 100 MB/s; a tensor<256xf32> is 1024 B, moved
over the link in 10.24 us.
"""

from functools import partial
from pathlib import Path

import pytest
from xdsl.context import Context

from hyperoffload.analysis.program import Program
from hyperoffload.dialects.hyperoffload import PrefetchOp, StoreOp
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Transfer
from hyperoffload.policies.peers import simulate_program

US = 1e-6
T = "tensor<256xf32>"
R = f"!hyperoffload.remote<{T}>"
ROUND_TRIP = f"""
func.func @f(%x: {T}) -> {T} {{
  %h = hyperoffload.store %x : {T} -> {R}
  hyperoffload.detach %x : {T}
  %y = hyperoffload.prefetch %h : {R} -> {T}
  %a = arith.addf %y, %y : {T}
  func.return %a : {T}
}}"""


@pytest.fixture(scope="module")
def hardware() -> Hardware:
    return load_hardware(str(Path(__file__).parents[2] / "inputs" / "round.toml"))


def test_plan_runs_the_program_as_written(ctx: Context, hardware: Hardware) -> None:
    program = Program(parse_mlir(ctx, ROUND_TRIP, "t.mlir"), hardware)
    result = program.simulate("plan")
    # the store (10.24 us), then the fetch (10.24 us), then the addf (2.048 us)
    assert result.makespan_s == pytest.approx(22.528 * US)
    assert (result.bytes_to_remote, result.bytes_to_device) == (1024, 1024)
    assert "reference_extraction" not in vars(program)  # nothing stripped for it


def test_the_reference_is_stripped(ctx: Context, hardware: Hardware) -> None:
    module = parse_mlir(ctx, ROUND_TRIP, "t.mlir")
    program = Program(module, hardware)
    assert not any(isinstance(s, Transfer) for s in program.reference.steps)
    assert any(isinstance(s, Transfer) for s in program.planned.steps)
    assert not any(
        isinstance(op, StoreOp | PrefetchOp) for op in program.reference_function.walk()
    )
    assert any(isinstance(op, StoreOp) for op in module.walk())  # left as it was
    none = program.simulate("none")
    assert none.makespan_s == pytest.approx(2.048 * US)  # the addf alone
    assert none.transfers == 0
    # x and the sum do not fit in 1024 B; nothing to evict but x, which it reads
    lru = partial(simulate_program, program, "reactive-lru")
    assert lru(capacity=1024).oom is not None
    assert lru(capacity=2048).oom is None
    assert program.unknown_ops == set()
