"""
The embedded path: an upstream `mlir.ir.Module` through the HyperOffload
pipeline inside an upstream PassManager, against `mlir-opt` parsing and
printing the same program, measured side by side in one run (a ratio).

    .venv/bin/python bench/embed_bench.py [--write-docs]

`--write-docs` writes the table into docs/benchmarks.md between
`<!-- embed-bench:begin/end -->`.
"""

import argparse
import subprocess
import tempfile
import time
from importlib import import_module
from pathlib import Path
from typing import Any

from compile_speed import TINY_STEPS

import hyperoffload
from hyperoffload.ir.upstream import mlir_tools_dir
from hyperoffload.support.markers import write_between

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- embed-bench:begin -->", "<!-- embed-bench:end -->"


def best_of(runs: int, work: Any) -> float:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(path: Path, target: str) -> tuple[float, float, float]:
    """Seconds for the embedded pipeline, mlir-opt parse+print, bindings parse+print."""
    ir: Any = import_module("mlir.ir")
    passmanager: Any = import_module("mlir.passmanager")
    with ir.Context() as context:
        upstream = hyperoffload.to_upstream(path.read_text(), context)
        generic: str = upstream.operation.get_asm(print_generic_op_form=True)

        def embedded() -> None:
            module = ir.Module.parse(generic)
            pass_manager = passmanager.PassManager.parse("builtin.module(canonicalize)")
            hyperoffload.add_to_pass_manager(pass_manager, hbm_capacity=target)
            pass_manager.run(module.operation)

        embedded_s = best_of(3, embedded)
        bindings_s = best_of(3, lambda: str(ir.Module.parse(generic)))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as file:
        file.write(generic)
        file.flush()
        irdl = ROOT / "dialects" / "hyperoffload.irdl.mlir"
        mlir_opt = mlir_tools_dir() / "mlir-opt"
        command = [str(mlir_opt), f"--irdl-file={irdl}", file.name, "-o", "/dev/null"]
        mlir_opt_s = best_of(3, lambda: subprocess.run(command, check=True))
    return embedded_s, mlir_opt_s, bindings_s


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true")
    options = parser.parse_args()
    lines = [
        "| program | target | embedded pipeline | mlir-opt parse+print | ratio "
        "| bindings parse+print (in process) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, (path, target) in TINY_STEPS.items():
        embedded_s, mlir_opt_s, bindings_s = measure(path, target)
        lines.append(
            f"| {name} | {target} | {embedded_s:.3f} s | {mlir_opt_s:.3f} s | "
            f"{embedded_s / mlir_opt_s:.1f}x | {bindings_s:.3f} s |"
        )
    text = "\n".join(lines)
    print(text)
    if options.write_docs:
        said = "`.venv/bin/python bench/embed_bench.py --write-docs` (wall clock on a shared machine, best of 3):"
        write_between(DOC, f"\n{said}\n\n{text}\n", BEGIN, END)


if __name__ == "__main__":
    main()
