"""
The seed training scenarios (`benchmark.seeds`) as Markdown: one section per
scenario, and the table of the seeds' training claims, each beside the
physical bound that limits it.

Bounds, from the run alone:
- time: the step's FLOPs over the bf16 peak;
- peak within a limit, offload alone: a byte out of HBM at the peak must
  cross the link to the device afterwards, so the peak cannot fall by more
  than the link carries in the allowed time, bandwidth x T x (1 + limit);
- time in a fixed HBM, offload alone: at `none`'s peak, peak - HBM bytes are
  elsewhere and must cross to the device, so T >= (peak - HBM) / bandwidth.

Recomputation escapes the last two (it rebuilds instead of moving).

```python
lines = seed_section(result)        # a `SeedTraining.run` result
table = claims_table([result])      # the seeds' training claims
```
"""

from __future__ import annotations

from typing import Any

from hyperoffload.benchmark.bound_words import lp_bound_words
from hyperoffload.support.units import format_bytes, format_seconds


def compute_bound_s(scenario: dict[str, Any]) -> float:
    """FLOPs over the bf16 peak."""
    return scenario["flops"] / scenario["peak_flops"]


def peak_bound(scenario: dict[str, Any], limit: float) -> int:
    """The least peak offload alone reaches within `limit` (see the module)."""
    none = scenario["none"]
    carried = scenario["remote_gb_per_s"] * 1e9 * none["makespan_s"] * (1 + limit)
    return max(0, int(none["peak_hbm_bytes"] - carried))


def fixed_bound_s(scenario: dict[str, Any], gb_per_s: float | None = None) -> float:
    """The least time offload alone runs in the fixed HBM (see the module)."""
    none = scenario["none"]
    bandwidth = (gb_per_s or scenario["remote_gb_per_s"]) * 1e9
    excess = max(0, none["peak_hbm_bytes"] - scenario["capacity_bytes"])
    return max(none["compute_s"], excess / bandwidth)


def _vs(figures: dict[str, Any], twin: int | None = None) -> str:
    """
    A peak against `none`'s, and against `twin` (`none`'s peak updating
    after the backward pass) where that is lower.
    """
    peak = figures["peak_hbm_bytes"]
    against = f"{-figures['peak_reduction']:+.1%}"
    if twin is not None and twin < peak / (1 - figures["peak_reduction"]):
        against += f"; {peak / twin - 1:+.1%} against `none` updating after"
    return f"{format_bytes(peak)} ({against}) at {figures['slowdown']:+.2%}"


def _state_share(figures: dict[str, Any]) -> str:
    held = figures.get("state_bytes_at_peak")
    if held is None:
        return "-"
    return f"{format_bytes(held)} ({held / figures['peak_hbm_bytes']:.1%})"


def _twin_peak(scenario: dict[str, Any]) -> int | None:
    """`none`'s peak on the same step updating after the backward pass (None: not run)."""
    twin: dict[str, Any] = scenario.get("none_updates_after") or {}
    return twin.get("peak_hbm_bytes")


def _twin_line(scenario: dict[str, Any]) -> list[str]:
    """With the optimizer step in the backward pass, `none` updating after it."""
    twin = scenario.get("none_updates_after")
    if not twin:
        return []
    return [
        f"- `none` updating after the backward pass (one optimizer step): "
        f"{format_seconds(twin['makespan_s'])} per step, peak "
        f"{format_bytes(twin['peak_hbm_bytes'])}"
    ]


def _lp_bound(entry: dict[str, Any], none_peak: int) -> str:
    """
    The LP bound that counts the link at an entry's limit (where the run
    computed it), and the share of the saving it allows that ours achieves.
    """
    ours = entry["ours"]
    within = ours.get("slowdown") is not None and ours["slowdown"] <= entry["limit"]
    return lp_bound_words(
        entry.get("lp_bound_bytes"),
        entry.get("lp_bound"),
        none_peak,
        entry["limit"],
        ours["peak_hbm_bytes"] if within else None,
    )


def seed_section(scenario: dict[str, Any]) -> list[str]:
    none = scenario["none"]
    bound = compute_bound_s(scenario)
    lines = [
        f"Configuration: {scenario['choice']}.",
        "",
        f"- `none` (unlimited HBM): {format_seconds(none['makespan_s'])} per "
        f"step, peak {format_bytes(none['peak_hbm_bytes'])}; "
        f"{scenario['flops'] / 1e12:,.1f} TFLOP over the "
        f"{scenario['peak_flops'] / 1e12:g} TFLOPS peak is "
        f"{format_seconds(bound)} ({bound / none['makespan_s']:.0%} of peak "
        f"throughput); {scenario['tokens']:,} tokens per step",
        *_twin_line(scenario),
        f"- optimizer states: {format_bytes(scenario['state_bytes'])} in all; "
        f"in HBM at `none`'s peak: {_state_share(none)}",
        f"- remote link {scenario['remote_gb_per_s']:g} GB/s each way"
        + (
            f"; fixed HBM {format_bytes(scenario['capacity_bytes'])}"
            if scenario["fixed"] or scenario["sweep"]
            else ""
        ),
        "",
    ]
    if scenario["limits"]:
        lines += [
            "| limit | ours: peak (vs none) at slowdown | ours: states at its peak "
            "| moved to / from HBM | best peer within the limit | link bound on "
            "the peak (offload alone) | LP bound (counts the link) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        searched = scenario.get("peers_searched", True)
        for entry in scenario["limits"]:
            ours, peer, limit = entry["ours"], entry["peer"], entry["limit"]
            best = (
                ("none within" if searched else "not searched on this step")
                if peer is None
                else f"`{peer['policy']}` ({peer['setting']}): "
                f"{format_bytes(peer['peak_hbm_bytes'])} "
                f"({-peer['peak_reduction']:+.1%}) at {peer['slowdown']:+.2%}"
            )
            lines.append(
                f"| +{limit:.1%} | {_vs(ours, _twin_peak(scenario))} "
                f"| {_state_share(ours)} "
                f"| {format_bytes(ours['bytes_to_device'])} / "
                f"{format_bytes(ours['bytes_to_remote'])} | {best} "
                f"| {format_bytes(peak_bound(scenario, limit))} "
                f"| {_lp_bound(entry, none['peak_hbm_bytes'])} |"
            )
        lines.append("")
    if scenario["fixed"]:
        lines += [
            f"In {format_bytes(scenario['capacity_bytes'])} of HBM (offload "
            "alone cannot run faster than "
            f"{format_seconds(fixed_bound_s(scenario))}):",
            "",
            "| policy | setting | fits | peak | iteration | vs none | exposed "
            "| arena (frag.) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for policy, entry in scenario["fixed"].items():
            lines.append(_fixed_row(policy, entry))
        lines.append("")
    if scenario["sweep"]:
        lines += [
            "Bandwidth sweep (the remote link each way; ours only):",
            "",
            "| GB/s | ours within the largest limit | ours in the fixed HBM: "
            f"iteration (exposed) | vs {scenario['sweep'][0]['gb_per_s']:g} GB/s "
            "| bound (offload alone) |",
            "| --- | --- | --- | --- | --- |",
        ]
        base = scenario["sweep"][0]["fixed"].get("makespan_s")
        for point in scenario["sweep"]:
            fixed = point["fixed"]
            time = fixed.get("makespan_s")
            speed = "-" if time is None or base is None else f"{base / time - 1:+.1%}"
            ran = (
                "no plan"
                if time is None
                else f"{format_seconds(time)} ({format_seconds(fixed['exposed_transfer_s'])})"
                + ("" if fixed["fits"] else ", does not fit")
            )
            peak = _vs(point["peak"]) if point.get("peak") else "not run"
            if point.get("from"):
                ran += f" (the `{point['from']}` run)"
            lines.append(
                f"| {point['gb_per_s']:g} | {peak} | {ran} | {speed} "
                f"| {format_seconds(fixed_bound_s(scenario, point['gb_per_s']))} |"
            )
        lines.append("")
    return lines


def _fixed_row(policy: str, entry: dict[str, Any]) -> str:
    if "makespan_s" not in entry:
        peak = entry.get("peak_hbm_bytes")
        shown = format_bytes(peak) if peak is not None else "-"
        return f"| {policy} | {entry['setting']} | no | {shown} | - | - | - | - |"
    arena = entry.get("arena_bytes")
    frag = (
        "-"
        if arena is None
        else f"{format_bytes(arena)} ({arena / entry['peak_hbm_bytes'] - 1:+.1%})"
    )
    exposed = entry.get("exposed_transfer_s")
    return (
        f"| {policy} | {entry.get('setting', '-')} | {'yes' if entry['fits'] else 'no'} "
        f"| {format_bytes(entry['peak_hbm_bytes'])} "
        f"| {format_seconds(entry['makespan_s'])} | {entry['slowdown']:+.1%} "
        f"| {'-' if exposed is None else format_seconds(exposed)} | {frag} |"
    )


def fitting_baseline(scenario: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The fastest peer that fits the fixed HBM (what a user runs without ours)."""
    fits = [
        (p, e)
        for p, e in scenario["fixed"].items()
        if p != "hyperoffload" and e.get("fits") and "makespan_s" in e
    ]
    return min(fits, key=lambda pe: pe[1]["makespan_s"], default=None)
