"""
Preloading for fuzz workers. The tools parse and verify text with upstream
MLIR in a fork of their own process (`hyperoffload.ir.upstream.run_forked`:
an assertion in the bindings aborts the child, not the tool), so a worker
that imports the bindings and the tools once has every fork start with them
loaded, as the tools themselves do after their first upstream parse.
"""

from __future__ import annotations

import importlib


def install() -> None:
    """Import the bindings and the tools in this process (a fuzz worker)."""
    for name in (
        "mlir.ir",
        "mlir.passmanager",
        "hyperoffload.tools.hyperoffload_opt",
        "hyperoffload.tools.hyperoffload_sim",
        "hyperoffload.tools.hyperoffload_check",
        "hyperoffload.targets",
        "hyperoffload.analysis.extract",
        "hyperoffload.policies.peers",
        "hyperoffload.sim.trace",
        "hyperoffload.sim.plot",
        "hyperoffload.evaluators.numeric",
        "hyperoffload.evaluators.execution",
        "hyperoffload.ir.upstream",
        "hyperoffload.ir.upstream_check",
        "xdsl.xdsl_opt_main",
    ):
        importlib.import_module(name)
