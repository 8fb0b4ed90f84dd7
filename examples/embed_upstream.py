"""
HyperOffload inside an upstream MLIR pipeline: the tiny LLaMA forward pass
(torch-mlir output, parameters tagged `remote`) as an upstream `mlir.ir.Module`
goes through `canonicalize`, the HyperOffload pipeline and `cse` in one
`mlir.passmanager.PassManager`; then the same module through `compile()`.

    .venv/bin/python examples/embed_upstream.py
"""

from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager

import hyperoffload

PROGRAM = Path(__file__).resolve().parent / "tiny_llama_forward.mlir"


def main() -> None:
    with ir.Context() as context:
        module = hyperoffload.to_upstream(PROGRAM.read_text(), context)
        pass_manager = PassManager.parse("builtin.module(canonicalize)")
        hyperoffload.add_to_pass_manager(
            pass_manager, hardware="ascend-910c", hbm_capacity="400KB"
        )
        pass_manager.add("cse")
        pass_manager.run(module.operation)
        module.operation.verify()
        text = str(module)
        print(
            f"upstream pipeline: {text.count('hyperoffload.prefetch')} prefetches, "
            f"{text.count('hyperoffload.detach')} detaches inserted"
        )

        original = hyperoffload.to_upstream(PROGRAM.read_text(), context)
        planned, report = hyperoffload.compile(
            original, hardware="ascend-910c", max_slowdown=0.02
        )
        assert isinstance(planned, ir.Module)
        print(
            f"compile(max_slowdown=0.02): peak {report.peak_before_bytes} B -> "
            f"{report.peak_after_bytes} B, makespan {report.makespan_before_s * 1e3:.3f} ms -> "
            f"{report.makespan_after_s * 1e3:.3f} ms on {report.hardware}"
        )


if __name__ == "__main__":
    main()
