"""The suite's results as Markdown: one section per scenario, seeds' figures beside ours."""

from __future__ import annotations

from typing import Any

from hyperoffload.benchmark.seeds_markdown import seed_section
from hyperoffload.support.units import format_bytes, format_seconds

METHOD = """\
Method: every policy runs in the same interpreter on the same program
(docs/simulator.md). The peers, each modelled from its upstream source:
`reactive-lru` (runtime swapping), `runtime-prefetch` (MindSpore's
MemCountedCache, Capuchin: evict by next use, prefetch within a horizon),
`distance` (MindSpore's swap heuristic) and `activation-pass` (PyTorch's
activation offloading). Each searches a grid that scales with the program
(`hyperoffload.benchmark.peers`): the runtimes' capacity by bisection, at
each prefetch horizon; select, prefetch and release distances and
`select_num`; which activations are tagged. Ours bisects its HBM target (at
most 7 full plans). A static peer fetches a tagged argument in its tier
before its first use and frees it after its last. Where ours may keep tagged
arguments in HBM between calls (`place-arguments`), every peer setting is
also tried with all tagged arguments resident, and the setting says which
the peer chose. A row shows the policy's best setting: its least peak within
the limit or, where none is within, its least slowdown (`within`: no).
Arena: the HBM a device must have once every buffer has an address. Ours
is compiled, so its buffers are laid out statically
(`hyperoffload-assign-offsets`); the peers allocate at run time with a
best-fit allocator (the CUDA caching allocator's policy), replayed over
their simulated run; `dynamic best-fit` is that allocator on every row,
ours included. Fragmentation is the arena over the live-byte peak, minus 1."""


def _peak_section(scenario: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for preset in scenario["presets"]:
        lines += [
            f"**{preset['hardware']}** (HBM {format_bytes(preset['hbm_capacity_bytes'])}), "
            f"each policy's best setting (within {scenario['limit']:.0%} if any is):",
            "",
            "| policy | setting | within | peak HBM | peak vs none | arena (frag.) "
            "| dynamic best-fit | makespan | slowdown | exposed transfer | moved "
            "| tokens/s | of the possible saving |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
            "| --- |",
        ]
        lp = preset.get("lp_bound_bytes")
        for row in preset["rows"]:
            if "peak_hbm_bytes" not in row:
                lines.append(f"| {row['policy']} | {row['setting']} |" + " - |" * 11)
                continue
            reference = row["policy"] == "none"
            peak = "-" if reference else f"{-row['peak_reduction']:+.1%}"
            achieved = _achieved(row, preset["rows"][0], lp) if not reference else "-"
            slowdown = "-" if reference else f"{row['slowdown']:+.2%}"
            within = "yes" if row["within"] else "out of memory" if row["oom"] else "no"
            lines.append(
                f"| {row['policy']} | {row['setting']} | {within} "
                f"| {format_bytes(row['peak_hbm_bytes'])} | {peak} | {_arena(row)} "
                f"| {format_bytes(row['dynamic_arena_bytes'])} "
                f"| {format_seconds(row['makespan_s'])} | {slowdown} "
                f"| {format_seconds(row['exposed_transfer_s'])} "
                f"| {format_bytes(row['bytes_moved'])} | {row['tokens_per_s']:,.0f} "
                f"| {achieved} |"
            )
        ours = preset["rows"][-1]
        lines += [
            "",
            *_bounds(preset, scenario["limit"]),
            f"- compile: parse {ours.get('parse_s', 0):.1f} s, pipeline at the target "
            f"{ours.get('passes_s', 0):.1f} s (target search {ours.get('target_search_s', 0):.1f} s)",
            "",
            *(f"![{plot}]({plot})" for plot in preset["plots"]),
            "",
        ]
    return lines


def _achieved(row: dict[str, Any], none: dict[str, Any], lp: int | None) -> str:
    """
    The share of the saving the LP bound allows (`none`'s peak less the
    bound) that a row within the limit achieves; `-` outside the limit (the
    bound is for plans within it) or without a bound.
    """
    if lp is None or not row["within"] or "peak_hbm_bytes" not in none:
        return "-"
    saving = none["peak_hbm_bytes"] - lp
    if saving <= 0:
        return "- (the bound allows none)"
    return f"{(none['peak_hbm_bytes'] - row['peak_hbm_bytes']) / saving:.1%}"


def _bounds(preset: dict[str, Any], limit: float) -> list[str]:
    """The bounds line: `M_LB`, the LP bound that counts the link, the time bound."""
    m_lb = format_bytes(preset["bound_peak_bytes"])
    time_bound = format_seconds(preset["bound_time_s"])
    lp = preset.get("lp_bound_bytes")
    if lp is None:  # results from before the LP bound
        fraction = preset["fraction_of_possible_saving"]
        return [
            f"- bounds: peak >= M_LB(T_exposed = 0) = {m_lb}, time >= {time_bound}; "
            f"ours achieves {'n/a' if fraction is None else f'{fraction:.1%}'} of "
            "the possible saving (against M_LB)"
        ]
    info = preset["lp_bound"]
    ours = preset["rows"][-1]
    fraction = preset["fraction_of_possible_saving"]
    share = (
        "n/a (the bound allows no saving)"
        if fraction is None
        else f"{fraction:.1%}"
        if ours.get("within")
        else f"n/a (ours is not within {limit:.0%})"
    )
    return [
        f"- bounds: peak >= M_LB(T_exposed = 0) = {m_lb} (each tensor with the "
        f"link to itself); peak >= {format_bytes(lp)} within {limit:.0%} (the LP "
        f"bound that counts the link: {info['windows']} windows, "
        f"{info['columns']:,} columns, {info['rows']:,} rows, {info['status']}, "
        f"{info['seconds']:.1f} s"
        + (f", added on {info['added']}" if "added" in info else "")
        + f"); time >= {time_bound}",
        f"- ours achieves {share} of the possible saving (`none`'s peak less the "
        "LP bound)",
    ]


def _arena(row: dict[str, Any]) -> str:
    """The arena a run needs and how far above its live peak that is."""
    return f"{format_bytes(row['arena_bytes'])} ({row['fragmentation']:+.1%})"


def _longest_section(scenario: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    limit = scenario["limit"]
    for preset in scenario["presets"]:
        lines += [
            f"**{preset['hardware']}** (fixed HBM {format_bytes(preset['hbm_capacity_bytes'])}"
            + (f"; within {limit:.0%} of none's time" if limit is not None else "")
            + "):",
            "",
            "| policy | longest that fits | setting | peak HBM | arena (frag.) "
            "| time per call | slowdown | tokens/s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for policy, entry in preset["longest"].items():
            length = (
                f"{entry['length']:,}"
                if entry["length"] is not None
                else f"none (shown: {entry['at']:,}"
                + (", out of memory)" if entry.get("oom") else ")")
            )
            if "peak_hbm_bytes" not in entry:
                lines.append(
                    f"| {policy} | {length} | {entry['setting']} |" + " - |" * 5
                )
                continue
            lines.append(
                f"| {policy} | {length} | {entry['setting']} "
                f"| {format_bytes(entry['peak_hbm_bytes'])} | {_arena(entry)} "
                f"| {format_seconds(entry['makespan_s'])} | {entry['slowdown']:+.2%} "
                f"| {entry['tokens_per_s']:,.1f} |"
            )
        tried = sorted({t["length"] for t in preset["tried"]})
        lines += [
            "",
            f"- lengths tried: {', '.join(f'{n:,}' for n in tried)}",
            "",
            *(f"![{plot}]({plot})" for plot in preset["plots"]),
            "",
        ]
    return lines


def _generation_section(scenario: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    compressed = (
        " (blocks moved INT8-compressed by ours and flexgen)"
        if scenario["compress"]
        else ""
    )
    for preset in scenario["presets"]:
        lines += [
            f"**{preset['hardware']}**, {scenario['tokens']} tokens after one warm-up "
            f"call{compressed}: each policy at the least HBM keeping "
            f"{1 - scenario['limit']:.0%} of `none`'s throughput (bisection):",
            "",
            "| policy | within | HBM | KV in HBM | KV vs none | tokens/s | vs none "
            "| moved/token | blocks/token |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in preset["rows"]:
            kv = row["kv_vs_none"]
            lines.append(
                f"| {row['policy']} | {'yes' if row['within'] else 'no'} "
                f"| {format_bytes(row['peak_hbm_bytes'])} "
                f"| {format_bytes(row['kv_peak_bytes'])} "
                f"| {'-' if kv is None else f'{kv - 1:+.1%}'} "
                f"| {row['tokens_per_s']:.2f} | {row['throughput_vs_none'] - 1:+.2%} "
                f"| {format_bytes(round(row['bytes_moved_per_token']))} "
                f"| {row['blocks_moved_per_token']:.2f} |"
            )
        lines.append("")
    return lines


def _longest_generation_section(scenario: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for preset in scenario["presets"]:
        lines += [
            f"**{preset['hardware']}** (HBM {format_bytes(preset['hbm_capacity_bytes'])}), "
            f"{scenario['tokens']} tokens: the longest cache each policy fits within "
            f"{scenario['limit']:.0%} of `none`'s throughput at that length:",
            "",
            "| policy | longest KV cache | peak HBM | KV in HBM | tokens/s | vs none |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for policy, row in preset["longest"].items():
            if row is None:
                lines.append(f"| {policy} | none of the lengths tried | | | | |")
                continue
            lines.append(
                f"| {policy} | {row['length']:,} | {format_bytes(row['peak_hbm_bytes'])} "
                f"| {format_bytes(row['kv_peak_bytes'])} | {row['tokens_per_s']:.2f} "
                f"| {row['throughput_vs_none'] - 1:+.2%} |"
            )
        lines.append("")
    return lines


def _experts_section(scenario: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for preset in scenario["presets"]:
        weights = preset["expert_weight_bytes"]
        for routing in preset["routings"]:
            fixed = [r for r in routing["runs"] if r["budget"] == scenario["fixed"]]
            lines += [
                f"**{preset['hardware']}**, routing `{routing['routing']}`"
                + (
                    f" (ours plans from `{routing['profile']}`)"
                    if routing.get("profile", routing["routing"]) != routing["routing"]
                    else ""
                )
                + f", {scenario['tokens']} tokens after a warm-up; routed experts "
                f"{format_bytes(weights)}, budget {scenario['fixed']:.0%} of them "
                f"({format_bytes(fixed[0]['budget_bytes']) if fixed else '-'}); the "
                f"least budget tried within {scenario['limit']:.0%} of `all-resident`:",
                "",
                "| policy | tokens/s | hit rate | moved/token | exposed/token "
                "| least budget within |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            for row in fixed:
                least = routing["least_within"][row["policy"]]
                lines.append(
                    f"| {row['policy']} | {row['tokens_per_s']:.2f} "
                    f"| {row['expert_hit_rate']:.3f} "
                    f"| {format_bytes(round(row['bytes_moved_per_token']))} "
                    f"| {row['exposed_transfer_s'] * 1e3:.2f} ms "
                    f"| {'none tried' if least is None else format_bytes(least)} |"
                )
            lines += ["", *_budget_table(routing["runs"])]
            lines += ["", f"![{routing['plot']}]({routing['plot']})", ""]
    return lines


def _budget_table(runs: list[dict[str, Any]]) -> list[str]:
    """Tokens/s of every policy at every budget (the plot's points)."""
    budgets = sorted({r["budget"] for r in runs})
    policies = list(dict.fromkeys(r["policy"] for r in runs))
    at = {(r["policy"], r["budget"]): r["tokens_per_s"] for r in runs}
    lines = [
        "| tokens/s at budget | " + " | ".join(f"{b:.1%}" for b in budgets) + " |",
        "| --- |" + " --- |" * len(budgets),
    ]
    for policy in policies:
        cells = (f"{at[policy, b]:.2f}" if (policy, b) in at else "-" for b in budgets)
        lines.append(f"| {policy} | " + " | ".join(cells) + " |")
    return lines


def _workload_lines(scenario: dict[str, Any]) -> list[str]:
    if scenario["kind"] == "longest-generation":
        return [f"Programs: `{scenario['command']}`."]
    if scenario["kind"] == "seed-training":
        return [
            f"Program: `{scenario['command']}` on `{scenario['hardware']}` "
            f"({scenario['ops']:,} ops; parse {scenario['parse_s']:.1f} s)."
        ]
    if scenario["kind"] in ("peak-at-slowdown", "generation", "experts"):
        return [
            f"Program: `{scenario['command']}` ({scenario['ops']:,} ops; export "
            f"{scenario['export_s']:.1f} s, parse {scenario['parse_s']:.1f} s)."
        ]
    sizes = "; ".join(
        f"{w['length']:,}{' (' + w['tier'] + ')' if w['tier'] != 'remote' else ''}: "
        f"{w['ops']:,} ops, export {w['export_s']:.1f} s, parse {w['parse_s']:.1f} s"
        for w in sorted(scenario["workloads"], key=lambda w: (w["tier"], w["length"]))
    )
    return [f"Programs: `{scenario['command']}` ({sizes})."]


def suite_markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Suite `{results['suite']}`: {len(results['scenarios'])} scenarios in "
        f"{results['wall_s'] / 60:.1f} min ({results['jobs']} jobs).",
        *(
            f"Run again and merged in ({m['date']}, {m['wall_s'] / 60:.1f} min, "
            f"{m['jobs']} jobs): {', '.join(m['scenarios'])}."
            for m in results.get("merged", [])
        ),
        "",
        METHOD,
        "",
    ]
    for scenario in results["scenarios"]:
        lines += [
            f"### {scenario['title']}",
            "",
            *_workload_lines(scenario),
            "",
            f"Seeds' figure: {scenario['paper']}.",
            "",
        ]
        if "error" in scenario:
            lines += [f"Failed: {scenario['error']}", ""]
        elif scenario["kind"] == "peak-at-slowdown":
            lines += _peak_section(scenario)
        elif scenario["kind"] == "generation":
            lines += _generation_section(scenario)
        elif scenario["kind"] == "longest-generation":
            lines += _longest_generation_section(scenario)
        elif scenario["kind"] == "experts":
            lines += _experts_section(scenario)
        elif scenario["kind"] == "seed-training":
            lines += seed_section(scenario)
        else:
            lines += _longest_section(scenario)
    return "\n".join(lines)
