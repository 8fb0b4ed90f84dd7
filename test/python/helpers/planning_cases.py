"""
The training and decode steps the pipeline tests plan (`test_same_plans.py`,
`test_plan_as_written.py`): a file, the pipeline's options, and whether its
gradients are written back to the pool.

```python
case = Case(INPUTS / "tiny_llama_train_bf16.mlir", {"hbm_capacity": "200KB"}, True)
PipelinePass(**case.options).apply(ctx, case.module(ctx))
```
"""

import re
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from hyperoffload.ir.parsing import parse_mlir

ROOT = Path(__file__).resolve().parents[3]
INPUTS = ROOT / "test" / "inputs"


def with_gradients_written_back(text: str) -> str:
    """A training step whose gradients (every result after the loss) live in the pool."""
    match = re.search(r"func\.func @train_step\(.*?\) -> \((.*?)\) \{", text)
    assert match is not None
    loss, *gradients = match.group(1).split(", ")
    tag = "{hyperoffload.tier = #hyperoffload.tier<remote>}"
    results = ", ".join([loss, *(f"{g} {tag}" for g in gradients)])
    return text[: match.start(1)] + results + text[match.end(1) :]


@dataclass(frozen=True)
class Case:
    path: Path
    options: dict[str, object]
    write_back: bool = False
    recomputes: bool = False
    """The plan recomputes some value."""
    parks: bool = False
    """Some tagged argument kept in HBM is parked between its uses."""

    def module(self, ctx: Context) -> ModuleOp:
        """The step parsed, its gradients tagged for the pool if `write_back`."""
        text = self.path.read_text()
        if self.write_back:
            text = with_gradients_written_back(text)
        return parse_mlir(ctx, text, self.path.name)
