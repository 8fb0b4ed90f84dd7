"""
`hyperoffload-sim`: run a program or a schedule on a modelled memory
hierarchy under a memory policy, and report time, peak memory and traffic.

```
hyperoffload-sim examples/tiny_llama_train.mlir --hardware ascend-910c \\
    --hbm-capacity 700KB --policy all --plot timeline.png --trace trace.json
```
"""

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import (
    LEADING_LOC,
    Severity,
    emit,
    format_diagnostic,
    verify_module,
)
from hyperoffload.model.hardware import Hardware, load_hardware, preset_names
from hyperoffload.model.schedule import Schedule, ScheduleError
from hyperoffload.policies.experts import EXPERT_POLICIES
from hyperoffload.policies.generation import GENERATION_POLICIES
from hyperoffload.policies.generation_topk import TOPK_POLICIES
from hyperoffload.policies.peers import POLICIES, PolicyError, PolicyOptions, run_policy
from hyperoffload.sim.report import format_table, report_dict
from hyperoffload.sim.simulator import SimResult, SimulationError
from hyperoffload.support.outputs import OutputError, Outputs
from hyperoffload.support.strict_json import NonFiniteError, strict_dumps
from hyperoffload.support.units import format_bytes, parse_size
from hyperoffload.tools.command_line import run_reporting_errors


def _size_in_bytes(text: str) -> int:
    """A size option documented in bytes: `1MB`, or `1000000` (bytes)."""
    return parse_size(text, bare_bytes=True)


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hyperoffload-sim",
        description=(
            "Simulate a program (MLIR as hyperoffload-opt reads it, torch-mlir output "
            "included) or a JSON schedule on a hardware model: one compute stream, one "
            "copy stream per link direction, one interconnect stream for the "
            "collectives of a sharded step, exact HBM occupancy."
        ),
    )
    parser.add_argument("input", type=Path, help="a .mlir program or a .json schedule")
    parser.add_argument(
        "--function", help="the function to run (default: the first public one)"
    )
    parser.add_argument(
        "--hardware",
        default="ascend-910c",
        help=f"a preset ({', '.join(preset_names())}) or a .toml file (default: %(default)s)",
    )
    parser.add_argument(
        "--hbm-capacity",
        help="device memory, e.g. 64GB or 512MiB; a bare integer is bytes "
        "(default: the hardware's)",
    )
    parser.add_argument(
        "--policy",
        default="plan",
        choices=[
            *dict.fromkeys(
                [*POLICIES, *GENERATION_POLICIES, *EXPERT_POLICIES, *TOPK_POLICIES]
            ),
            "all",
        ],
        help="plan: the program as compiled (default); all: every policy side by side",
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON instead of a table"
    )
    parser.add_argument(
        "--trace", type=Path, help="write Chrome/Perfetto trace-event JSON"
    )
    parser.add_argument("--plot", type=Path, help="write a PNG memory timeline")
    parser.add_argument(
        "--execute",
        action="store_true",
        help="also compute real values (numpy) and compare with the program stripped of offload ops",
    )
    parser.add_argument(
        "--generate",
        type=int,
        metavar="N",
        help="run N decode calls of a step whose KV cache is in blocks, residency "
        "carried from call to call (policies: "
        f"{', '.join(GENERATION_POLICIES)}; docs/simulator.md)",
    )
    parser.add_argument(
        "--routing",
        metavar="SPEC",
        help="--generate on a routed MoE export (hyperoffload-gen ... --experts routed): "
        "experts chosen per token by uniform, zipf:S or trace:FILE, seeded; policies: "
        f"{', '.join(EXPERT_POLICIES)} (plan means ours: on a program planned with "
        "routing=..., with its resident experts)",
    )
    parser.add_argument(
        "--expert-budget",
        metavar="SIZE",
        help="--routing: HBM for routed experts' weights, e.g. 2GB "
        "(default: the planned program's budget, else half of them)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="--routing: the sampling seed (default: 0)"
    )
    parser.add_argument(
        "--compress-kv",
        choices=["int8"],
        help="--generate: the block schedules (plan, flexgen) move blocks compressed "
        "(default: as the step's plan moves them, its IR's compress attributes); "
        "an error without --generate",
    )
    topk = parser.add_argument_group(
        "top-k decode (--generate on hyperoffload-gen ... --attention topk)",
        "The calls replay recorded block rankings; policies none, plan (ours: a "
        "heat table of hot blocks, the next likely blocks fetched ahead) and "
        "on-demand (a runtime cache of as many blocks, least recently used out).",
    )
    topk.add_argument(
        "--selections",
        type=Path,
        metavar="FILE",
        help="the rankings to replay (bench/topk/selections.json, written by "
        "bench/topk_accuracy.py)",
    )
    topk.add_argument(
        "--hot-blocks",
        type=int,
        metavar="N",
        help="resident hot blocks per layer (default: ours' fewest within 1%% of "
        "none's tokens/s)",
    )
    peers = parser.add_argument_group("peer policies (docs/simulator.md)")
    defaults = PolicyOptions()
    peers.add_argument(
        "--resident-arguments",
        action="store_true",
        help="peers keep tagged arguments in HBM between calls (ours: place-arguments)",
    )
    peers.add_argument("--select-distance", type=int, default=defaults.select_distance)
    peers.add_argument(
        "--prefetch-distance", type=int, default=defaults.prefetch_distance
    )
    peers.add_argument(
        "--release-distance", type=int, default=defaults.release_distance
    )
    peers.add_argument(
        "--select-num",
        type=int,
        help="distance: offload at most this many tensors, the largest first",
    )
    peers.add_argument(
        "--forward-end", type=int, help="compute step ending the forward pass"
    )
    peers.add_argument(
        "--tag-fraction",
        type=float,
        default=defaults.tag_fraction,
        help="activation-pass: tag the largest activations up to this fraction of their bytes",
    )
    peers.add_argument(
        "--min-bytes",
        type=_size_in_bytes,
        default=defaults.min_bytes,
        help="activation-pass: tag only activations of at least this size",
    )
    peers.add_argument(
        "--skip-last",
        type=float,
        default=defaults.skip_last,
        help="activation-pass: keep activations produced in this last fraction of the forward",
    )
    peers.add_argument(
        "--horizon",
        type=int,
        default=defaults.horizon,
        help="runtime-prefetch: ops ahead whose reads are prefetched",
    )
    return parser


def _progress(message: str) -> None:
    emit("hyperoffload-sim", Severity.REMARK, message)


def _load(
    options: argparse.Namespace, hardware: Hardware
) -> tuple[Schedule, Schedule, Any]:
    """The planned and stripped schedules, and the module (None for a schedule file)."""
    text = options.input.read_text()
    if options.input.suffix == ".json":
        schedule = Schedule.loads(text, str(options.input))
        return schedule, schedule, None
    from hyperoffload.analysis.program import Program

    module = _program(options, text)
    program = Program(module, hardware, options.function)
    planned, stripped, unknown = program.planned, program.reference, program.unknown_ops
    if unknown:
        emit(
            "hyperoffload-sim",
            Severity.WARNING,
            f"no cost model for {', '.join(sorted(unknown))}; "
            "estimated from bytes moved at HBM bandwidth",
        )
    return planned, stripped, module


def _program(options: argparse.Namespace, text: str | None = None) -> ModuleOp:
    """The input program, parsed and verified (what is simulated must be valid IR)."""
    from hyperoffload.ir.engines import parse_with_engine

    start = time.perf_counter()
    source = options.input.read_text() if text is None else text
    module = parse_with_engine(make_context(), source, str(options.input))
    verify_module(module)
    _progress(f"parsed {options.input} in {time.perf_counter() - start:.2f} s")
    return module


_OVERFLOW = (
    " (a time overflowed: is a hardware figure too small, or a program too large?)"
)


def _json(reports: list[dict[str, Any]]) -> str:
    """One report as an object, several as `{"results": [...]}`; strict JSON."""
    try:
        return strict_dumps(
            reports[0] if len(reports) == 1 else {"results": reports}, indent=1
        )
    except NonFiniteError as err:
        raise NonFiniteError(f"the report is not finite: {err}{_OVERFLOW}") from None


def _outputs(options: argparse.Namespace) -> Outputs:
    """The files the run writes, checked before it starts."""
    outputs = Outputs({"--trace": options.trace, "--plot": options.plot})
    if options.plot is not None:
        from hyperoffload.sim.plot import check_plot_path

        check_plot_path(options.plot)
    return outputs


def _generate(options: argparse.Namespace, hardware: Hardware, outputs: Outputs) -> str:
    """`--generate N`: the decode step called N times under each policy."""
    from hyperoffload.analysis.kv_cache import decode_step
    from hyperoffload.analysis.topk_cache import is_topk
    from hyperoffload.policies.generation import (
        format_generation_table,
        simulate_generation,
    )
    from hyperoffload.support.quantize import Compression

    if options.input.suffix == ".json":
        raise PolicyError("--generate needs a program, not a schedule")
    policies = (
        list(GENERATION_POLICIES) if options.policy == "all" else [options.policy]
    )
    module = _program(options)
    if is_topk(module, options.function):
        return _generate_topk(options, module, hardware)
    if options.selections is not None or options.hot_blocks is not None:
        raise PolicyError("--selections and --hot-blocks need a top-k decode step")
    step = decode_step(module, hardware, options.function)
    reports: list[dict[str, Any]] = []
    runs: list[tuple[str, list[int]]] = []
    compress = (
        step.compress
        if options.compress_kv is None
        else Compression(options.compress_kv)
    )
    if step.compress is not None:
        _progress(f"the plan moves KV blocks compressed ({step.compress})")
    for policy in policies:
        start = time.perf_counter()
        result = simulate_generation(
            step,
            options.generate,
            policy,
            hardware,
            hardware.hbm_capacity,
            compress=compress,
        )
        _progress(
            f"generated {options.generate} tokens under '{policy}' "
            f"in {time.perf_counter() - start:.2f} s"
        )
        reports.append(result.report() | {"hardware": hardware.name})
        runs.append((policy, result.peak_per_token))
    if options.plot:
        from hyperoffload.sim.plot import peak_per_token_image

        title = f"{options.input.name}: {options.generate} tokens on {hardware.name}"
        image = peak_per_token_image(runs, options.plot, title, hardware.hbm_capacity)
        outputs.put(options.plot, image)
    return _json(reports) if options.json else format_generation_table(reports)


def _generate_topk(
    options: argparse.Namespace, module: ModuleOp, hardware: Hardware
) -> str:
    """`--generate N` on a top-k decode step: the recorded rankings replayed."""
    import json

    from hyperoffload.analysis.topk_cache import topk_step
    from hyperoffload.policies.generation_topk import (
        format_topk_table,
        least_hot,
        map_ranking,
        replay,
    )
    from hyperoffload.support.topk_blocks import topk_layout

    if options.selections is None:
        raise PolicyError(
            "--generate on a top-k decode step needs --selections FILE (the block "
            "rankings to replay; bench/topk_accuracy.py writes them)"
        )
    step = topk_step(module, hardware, options.function)
    try:
        recorded = json.loads(options.selections.read_text())
        calls: list[list[list[int]]] = recorded["steps"]
        block, sinks, recent, prompt = (
            int(recorded[key]) for key in ("block", "sinks", "recent", "prompt")
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise PolicyError(
            f"{options.selections}: not a rankings file ({err})"
        ) from None
    if not calls:
        raise PolicyError(f"{options.selections}: no recorded calls")
    candidates = step.candidate_blocks()
    rankings = [
        [
            map_ranking(
                ranks,
                topk_layout(block, sinks, recent, prompt + i).candidates,
                candidates,
            )
            for ranks in call
        ]
        for i, call in enumerate(calls)
    ]
    compressed = options.compress_kv is not None
    if options.policy == "all":
        policies = list(TOPK_POLICIES)
    elif options.policy in TOPK_POLICIES:
        policies = [options.policy]
    else:
        raise PolicyError(
            f"'{options.policy}' is not a top-k generation policy "
            f"(choose from {', '.join(TOPK_POLICIES)})"
        )
    hot = options.hot_blocks
    if hot is None:
        hot = least_hot(
            step, rankings, options.generate, hardware, 0.01, compressed
        ).hot
    results = [
        replay(step, rankings, options.generate, policy, hot, hardware, compressed)
        for policy in policies
    ]
    if options.json:
        return _json([r.report() | {"hardware": hardware.name} for r in results])
    return format_topk_table(results)


def _route(options: argparse.Namespace, hardware: Hardware) -> str:
    """`--routing SPEC --generate N`: routed experts over N decode tokens."""
    from hyperoffload.analysis.extract import main_function
    from hyperoffload.analysis.moe_step import moe_step
    from hyperoffload.analysis.program import Program
    from hyperoffload.model.routing import parse_routing
    from hyperoffload.planning.experts import planned_hot_set
    from hyperoffload.policies.experts import format_expert_table, simulate_experts

    if options.generate is None:
        raise PolicyError("--routing needs --generate N (the tokens to route)")
    if options.input.suffix == ".json":
        raise PolicyError("--routing needs a program, not a schedule")
    routing = parse_routing(options.routing)
    module = _program(options)
    planned = planned_hot_set(main_function(module, options.function))
    if planned is not None:  # the step is read from the program before its plan
        module = Program(module, hardware, options.function).reference_module
    step = moe_step(module, hardware, options.function)
    hot_set, planned_budget = planned or (None, step.expert_weight_bytes() // 2)
    budget = (
        planned_budget
        if options.expert_budget is None
        else parse_size(options.expert_budget, bare_bytes=True)
    )
    if planned is not None:
        _progress("the program is planned: ours keeps its resident experts")
    if options.policy == "all":
        policies = list(EXPERT_POLICIES)
    else:
        policies = ["ours" if options.policy == "plan" else options.policy]
        if policies[0] not in EXPERT_POLICIES:
            raise PolicyError(
                f"'{options.policy}' is not a routed-expert policy "
                f"(choose from {', '.join(EXPERT_POLICIES)})"
            )
    _progress(
        f"{len(step.layers)} MoE layers of {step.experts} experts (top-{step.top_k}), "
        f"expert budget {format_bytes(budget)} of {format_bytes(step.expert_weight_bytes())}"
    )
    reports: list[dict[str, Any]] = []
    for policy in policies:
        result = simulate_experts(
            step,
            routing,
            options.generate,
            policy,
            hardware,
            budget,
            options.seed,
            hot_set=hot_set,
        )
        reports.append(result.report() | {"hardware": hardware.name})
    return _json(reports) if options.json else format_expert_table(reports)


def _located(err: SimulationError, options: argparse.Namespace) -> ValueError:
    """
    `err` located in the input: at its op's `file:line:col` in a program
    (`input.mlir:7:3: error: 'arith.addf' reads %h, ...`), at its step in a
    schedule file, whatever file the schedule's `loc` fields name
    (`schedule.json: error: steps[12]: 'arith.addf' reads %h, ...`).
    """
    match = LEADING_LOC.match(str(err))
    message = match["message"] if match else str(err)
    if options.input.suffix == ".json":
        step = "at entry" if err.step is None or err.step < 0 else f"steps[{err.step}]"
        return ScheduleError(f"{step}: {message}", str(options.input))
    if match and match["loc"].startswith(f"{options.input}:"):
        return SimulationError(format_diagnostic(match["loc"], "error", message))
    return err


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    outputs = _outputs(options)
    if options.compress_kv is not None and (
        options.generate is None or options.routing is not None
    ):
        raise PolicyError(
            "--compress-kv applies to --generate on a decode step in blocks (a "
            "single run or schedule moves what its IR's compress attributes say; "
            "plan with hyperoffload-pipeline{compress-kv=int8})"
        )
    hardware = load_hardware(options.hardware, options.hbm_capacity)
    if options.routing is not None:
        if options.trace is not None or options.plot is not None:
            raise PolicyError("--routing writes no --trace or --plot")
        report = _route(options, hardware)
    elif options.generate is not None:
        if options.trace is not None:
            raise PolicyError(
                "--generate writes no --trace (its --plot: each call's peak)"
            )
        report = _generate(options, hardware, outputs)
    else:
        try:
            report = _simulate(options, hardware, outputs)
        except SimulationError as err:
            raise _located(err, options) from None
    outputs.write()  # every file, or none
    for path in (options.trace, options.plot):
        if path is not None:
            _progress(f"wrote {path}")
    print(report)
    return 0


def _simulate(options: argparse.Namespace, hardware: Hardware, outputs: Outputs) -> str:
    """A program or a schedule under each policy: the report; the trace and plot put."""
    capacity = hardware.hbm_capacity
    planned, stripped, module = _load(options, hardware)
    # every peer option is a flag of the same name
    policy_options = PolicyOptions(
        **{f.name: getattr(options, f.name) for f in fields(PolicyOptions)}
    )
    policies = list(POLICIES) if options.policy == "all" else [options.policy]
    if module is None and any(p not in ("plan", "none") for p in policies):
        raise PolicyError(
            f"--policy {options.policy}: {options.input} is a schedule, which runs "
            "under 'plan' or 'none' only (the other policies plan a program)"
        )
    reference = run_policy("none", planned, stripped, hardware, None, policy_options)
    runs: list[tuple[str, SimResult]] = []
    for policy in policies:
        start = time.perf_counter()
        try:
            result = (
                reference
                if policy == "none"
                else run_policy(
                    policy, planned, stripped, hardware, capacity, policy_options
                )
            )
        except PolicyError as err:
            if options.policy != "all":
                raise
            _progress(f"skipped '{policy}': {err}")
            continue
        _progress(f"simulated '{policy}' in {time.perf_counter() - start:.2f} s")
        runs.append((policy, result))
    reports = [report_dict(p, hardware.name, r, reference) for p, r in runs]
    if options.execute:
        if module is None:
            raise PolicyError("--execute needs a program, not a schedule")
        from hyperoffload.evaluators.numeric import outputs_match_reference

        match = outputs_match_reference(module, function=options.function)
        for report in reports:
            report["outputs_match_reference"] = match
    if options.json:
        text = _json(reports)
    else:
        text = format_table(reports)
        if options.execute:
            text += (
                f"\noutputs_match_reference: {reports[0]['outputs_match_reference']}"
            )
    if options.trace:
        from hyperoffload.sim.trace import trace_json

        name = f"{options.input.name} ({runs[0][0]})"
        try:
            outputs.put(options.trace, trace_json(runs[0][1], name))
        except NonFiniteError as err:
            raise OutputError(
                options.trace, f"cannot write --trace: {err}{_OVERFLOW}"
            ) from None
        _progress(f"the trace is policy '{runs[0][0]}'s")
    if options.plot:
        from hyperoffload.sim.plot import plot_image

        title = f"{options.input.name} on {hardware.name}"
        outputs.put(options.plot, plot_image(runs, options.plot, title))
    return text


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors("hyperoffload-sim", lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
