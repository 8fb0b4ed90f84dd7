"""
`hyperoffload-run`'s logic: run a program and its reference (the program
with every offload op stripped) on a device, on the same inputs, and report
the planned run in the keys `hyperoffload-sim --json` uses.

```python
report = run_program(module, make_device("cpu"), seed=0)
report["makespan_s"], report["peak_hbm_bytes"], report["outputs_match_reference"]
```

Inputs are the numeric evaluator's (`random_inputs`: seeded, floats
~ N(0, 0.5^2), integers in 0..7); `fast=True` draws them with torch's
generator instead (other values, same distributions), for programs whose
parameters are gigabytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.evaluators.numeric.inputs import prepare_inputs, random_inputs
from hyperoffload.evaluators.numeric.interpreter import find_function
from hyperoffload.evaluators.torch.devices import Device, cuda_memory
from hyperoffload.evaluators.torch.executor import Execution, Measurement, execute
from hyperoffload.evaluators.torch.values import from_numpy, shape_of, torch_dtype
from hyperoffload.ir.strip import strip_offload_ops
from hyperoffload.support.arrays import same_array
from hyperoffload.support.units import format_bytes, format_seconds


def tensor_inputs(
    function: FuncOp, seed: int = 0, fast: bool = False
) -> list[torch.Tensor]:
    """One host tensor per argument of `function`, seeded."""
    if not fast:
        arrays = prepare_inputs(function, random_inputs(function, seed))
        return [
            from_numpy(a, arg.type)
            for a, arg in zip(arrays, function.args, strict=True)
        ]
    generator = torch.Generator().manual_seed(seed)
    tensors: list[torch.Tensor] = []
    for arg in function.args:
        shape, dtype = shape_of(arg.type), torch_dtype(arg.type)
        if dtype == torch.bool:
            tensors.append(torch.randint(0, 2, shape, generator=generator).to(dtype))
        elif dtype.is_floating_point:
            tensors.append(torch.randn(shape, generator=generator, dtype=dtype) * 0.5)
        else:
            tensors.append(torch.randint(0, 8, shape, generator=generator, dtype=dtype))
    return tensors


def has_offload_ops(module: ModuleOp) -> bool:
    return any(isinstance(op, PrefetchOp | StoreOp | DetachOp) for op in module.walk())


def _change(value: float, reference: float) -> float | None:
    if reference == 0:
        return 0.0 if value == 0 else None
    return value / reference - 1


def report_dict(
    policy: str,
    device: Device,
    measured: Measurement,
    reference: Measurement | None = None,
) -> dict[str, Any]:
    """One run in `hyperoffload-sim`'s keys (bounds: None, they are not measured)."""
    capacity = cuda_memory(device.torch_device) if device.kind == "cuda" else None
    arena = measured.reserved_peak_bytes
    report: dict[str, Any] = {
        "policy": policy,
        "hardware": device.name,
        "device": device.kind,
        "hbm_capacity_bytes": capacity,
        "peak_hbm_bytes": measured.peak_hbm_bytes,
        "reserved_peak_bytes": measured.reserved_peak_bytes,
        "tracked_peak_bytes": measured.tracked_peak_bytes,
        "arena_bytes": arena,
        "fragmentation": (
            arena / measured.peak_hbm_bytes - 1
            if arena is not None and measured.peak_hbm_bytes
            else None
        ),
        "makespan_s": measured.makespan_s,
        "compute_s": measured.makespan_s - measured.exposed_transfer_s,
        "exposed_transfer_s": measured.exposed_transfer_s,
        "bytes_to_device": measured.bytes_to_device,
        "bytes_to_remote": measured.bytes_to_remote,
        "transfers": measured.transfers,
        "oom": False,
        "bound_time_s": None,
        "bound_peak_bytes": None,
        "ops": measured.ops,
    }
    if reference is not None:
        report["slowdown_vs_none"] = _change(measured.makespan_s, reference.makespan_s)
        report["peak_vs_none"] = _change(
            measured.peak_hbm_bytes, reference.peak_hbm_bytes
        )
    return report


def outputs_match(got: Execution, expected: Execution) -> bool:
    """Same dtypes, shapes and values (a NaN equals any NaN)."""
    return len(got.outputs) == len(expected.outputs) and all(
        same_array(a, b) for a, b in zip(got.outputs, expected.outputs, strict=True)
    )


def measure(
    module: ModuleOp,
    device: Device,
    inputs: Sequence[torch.Tensor],
    function: str | None = None,
    warmup: int = 0,
) -> Execution:
    """The last of `warmup + 1` runs of `module` on `inputs`."""
    for _ in range(warmup):
        execute(module, device, inputs, function)
    return execute(module, device, inputs, function)


def run_program(
    module: ModuleOp,
    device: Device,
    function: str | None = None,
    seed: int = 0,
    warmup: int = 1,
    fast_inputs: bool = False,
) -> dict[str, Any]:
    """
    Run `module` and its reference on `device` on the same seeded inputs
    (after `warmup` runs of the reference); the report of `module`'s run,
    with `outputs_match_reference` and the reference's own report (`reference`).
    """
    func_op = find_function(module, function)
    name = func_op.sym_name.data
    inputs = tensor_inputs(func_op, seed, fast_inputs)
    stripped = module.clone()
    strip_offload_ops(stripped)
    expected = measure(stripped, device, inputs, name, warmup)
    got = measure(module, device, inputs, name)
    policy = "plan" if has_offload_ops(module) else "none"
    report = report_dict(policy, device, got.measurement, expected.measurement)
    report["function"] = name
    report["seed"] = seed
    report["outputs_match_reference"] = outputs_match(got, expected)
    report["reference"] = report_dict("none", device, expected.measurement)
    return report


def _bytes(value: int | None) -> str:
    return "-" if value is None else format_bytes(value)


def format_report(report: dict[str, Any]) -> str:
    """The run and its reference as a table, then the verdict."""
    header = (
        "run",
        "peak",
        "reserved",
        "makespan",
        "exposed",
        "to device",
        "to remote",
    )
    rows: list[tuple[str, ...]] = [header]
    for label, r in ((report["policy"], report), ("reference", report["reference"])):
        rows.append(
            (
                label,
                _bytes(r["peak_hbm_bytes"]),
                _bytes(r["reserved_peak_bytes"]),
                format_seconds(r["makespan_s"]),
                format_seconds(r["exposed_transfer_s"]),
                format_bytes(r["bytes_to_device"]),
                format_bytes(r["bytes_to_remote"]),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"device {report['device']} ({report['hardware']}), @{report['function']}, "
        f"seed {report['seed']}"
    ]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.append(f"outputs_match_reference: {report['outputs_match_reference']}")
    return "\n".join(lines)
