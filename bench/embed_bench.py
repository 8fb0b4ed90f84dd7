"""
The embedded path: an upstream `mlir.ir.Module` through the HyperOffload
pipeline inside an upstream PassManager, against `mlir-opt` parsing and
printing the same program, measured side by side in one run (a ratio).

    .venv/bin/python bench/embed_bench.py
"""

import subprocess
import tempfile
import time
from importlib import import_module
from pathlib import Path
from typing import Any

import hyperoffload
from hyperoffload.ir.upstream import mlir_tools_dir

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "tiny-llama-forward": (ROOT / "examples" / "tiny_llama_forward.mlir", "400KB"),
    "tiny-llama-train": (ROOT / "examples" / "tiny_llama_train.mlir", "632KB"),
}


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
    print(
        "| program | embedded pipeline | mlir-opt parse+print | ratio | bindings parse+print |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name, (path, target) in PROGRAMS.items():
        embedded_s, mlir_opt_s, bindings_s = measure(path, target)
        print(
            f"| {name} | {embedded_s:.3f} s | {mlir_opt_s:.3f} s | "
            f"{embedded_s / mlir_opt_s:.1f}x | {bindings_s:.3f} s |"
        )


if __name__ == "__main__":
    main()
