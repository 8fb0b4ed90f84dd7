"""
HyperOffload: data movement across a memory hierarchy as part of the program.

`hyperoffload.compile(module, hardware=..., hbm_capacity=..., **options)` and
`hyperoffload.add_to_pass_manager(pass_manager, ...)` embed it in other
toolchains (see `hyperoffload.api`).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hyperoffload.api import (
        CompileReport,
        add_to_pass_manager,
        compile,
        load_dialect,
        to_upstream,
    )

__version__ = "0.1.0"
__all__ = [
    "CompileReport",
    "add_to_pass_manager",
    "compile",
    "load_dialect",
    "to_upstream",
]


def __getattr__(name: str) -> Any:
    """Import the embedding API on first use (it pulls in xDSL and the planner)."""
    if name in __all__:
        from hyperoffload import api

        return getattr(api, name)
    raise AttributeError(f"module 'hyperoffload' has no attribute {name!r}")
