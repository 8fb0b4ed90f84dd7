"""
The help `hyperoffload-opt` gives on passes: ours with their options first,
xDSL's only on request.

```
$ hyperoffload-opt --list-passes
hyperoffload-move-window
    Place prefetches just in time, stores after producers, detaches after last uses.
    hardware=ascend-910c       A preset name or a TOML file (docs/simulator.md).
    ...
```
"""

import ast
import dataclasses
import inspect
import itertools
import textwrap
from collections.abc import Callable, Iterator

from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]


def option_docs(pass_type: type) -> dict[str, str]:
    """The docstring under each dataclass field of `pass_type` and its bases."""
    docs: dict[str, str] = {}
    for cls in reversed(pass_type.__mro__):
        if not dataclasses.is_dataclass(cls) or cls.__module__.startswith("xdsl."):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        docs.update(_field_docs(tree.body[0]))
    return docs


def _field_docs(node: ast.stmt) -> Iterator[tuple[str, str]]:
    if not isinstance(node, ast.ClassDef):
        return
    for field, doc in itertools.pairwise(node.body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
        ):
            yield field.target.id, " ".join(doc.value.value.split())


def describe_pass(name: str, pass_type: type[ModulePass]) -> str:
    """`name`, its docstring's first line, then one line per option."""
    summary = (inspect.getdoc(pass_type) or "").strip().splitlines()
    lines = [name, f"    {summary[0]}" if summary else ""]
    docs = option_docs(pass_type)
    for field in (
        dataclasses.fields(pass_type) if dataclasses.is_dataclass(pass_type) else ()
    ):
        if field.name == "name" or not field.init:
            continue
        option = f"{field.name.replace('_', '-')}={_spelled(field)}"
        lines.append(f"    {option:<30} {docs.get(field.name, '')}".rstrip())
    return "\n".join(line for line in lines if line)


def _spelled(field: dataclasses.Field[object]) -> str:
    """A field's default as a pass option spells it (`true`, `a,b`; unset: empty)."""
    if field.default is dataclasses.MISSING:
        return "(required)"
    default = field.default
    if default is None:
        return ""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, tuple):
        return ",".join(str(d) for d in default)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return str(default)


def describe_passes(passes: dict[str, PassFactory]) -> str:
    """Every pass of `passes`, described, in name order."""
    return "\n\n".join(describe_pass(n, passes[n]()) for n in sorted(passes)) + "\n"
