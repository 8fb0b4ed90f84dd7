"""
`hyperoffload-gen --module package.module:factory`: export your own
`nn.Module` (`hyperoffload.frontend.export`) from the command line.

```
hyperoffload-gen --module mymodels:resnet --mode train --optimizer sgd \\
    --loss cross_entropy -o resnet_train.mlir
hyperoffload-gen --module mymodels:vit --inputs 2x3x32x32xf32 -o vit.mlir
```

The factory is a function of no arguments returning ``model``,
``(model, example_inputs)`` or ``(model, example_inputs, targets)``;
``--inputs SPEC`` (and ``--targets SPEC``) give the example inputs as
tensor types instead, comma-separated (``2x3x32x32xf32,2xi64``: random
values; shapes are what the export reads). The module is imported from the
current directory or ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any, cast

from hyperoffload.frontend.configs import MODES
from hyperoffload.frontend.training import OPTIMIZERS
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier

TOOL = "hyperoffload-gen"
DTYPES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i1": "bool",
}


class ModuleSpecError(ValueError):
    """A malformed --module, --inputs or --targets, or a factory that fails."""


def arguments() -> argparse.ArgumentParser:
    """The options of `hyperoffload-gen --module`."""
    parser = argparse.ArgumentParser(
        prog=f"{TOOL} --module",
        description=(
            "Export your own nn.Module (a factory package.module:function returning "
            "model, (model, example_inputs) or (model, example_inputs, targets)) to "
            "linalg-on-tensors MLIR with its parameters and buffers as tagged arguments."
        ),
    )
    parser.add_argument("--module", required=True, help="package.module:factory")
    parser.add_argument("--mode", choices=MODES, default="forward")
    parser.add_argument(
        "--inputs", help="example inputs as tensor types, e.g. 2x3x32x32xf32,2xi64"
    )
    parser.add_argument("--targets", help="the loss's targets as tensor types (train)")
    parser.add_argument(
        "--loss",
        default="model",
        help="cross_entropy, mse, or model: the model's (first) output is the loss "
        "(train; default: %(default)s)",
    )
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="none")
    parser.add_argument(
        "--remote",
        default="parameters",
        help="what is tagged for the pool: parameters, all, none, or "
        "comma-separated names (default: %(default)s)",
    )
    parser.add_argument(
        "--tier", choices=[str(t) for t in OFFLOAD_TIERS], default=str(Tier.REMOTE)
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --inputs' values")
    parser.add_argument(
        "-o", "--output", type=Path, help="output file (default: stdout)"
    )
    return parser


def tensors_of(spec: str, seed: int) -> list[Any]:
    """Random tensors of the comma-separated tensor types `spec`."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    tensors: list[Any] = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        match = re.fullmatch(r"((?:\d+x)*)(\w+)", item)
        if match is None or match.group(2) not in DTYPES:
            raise ModuleSpecError(
                f"'{item}' is not a tensor type such as 2x3xf32 "
                f"(element types: {', '.join(DTYPES)})"
            )
        shape = [int(d) for d in match.group(1).split("x") if d]
        dtype = getattr(torch, DTYPES[match.group(2)])
        if dtype.is_floating_point:
            tensors.append(torch.randn(shape, generator=generator).to(dtype))
        else:
            tensors.append(torch.randint(0, 2, shape, generator=generator).to(dtype))
    return tensors


def load_factory(spec: str) -> tuple[Any, list[Any], list[Any]]:
    """Call the factory `spec` names: the model, its example inputs and targets."""
    module_name, _, function = spec.partition(":")
    if not module_name or not function:
        raise ModuleSpecError(f"--module takes package.module:factory, not '{spec}'")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        factory = getattr(import_module(module_name), function)
    except (ImportError, AttributeError) as err:
        raise ModuleSpecError(f"cannot load {spec}: {err}") from None
    made: Any = factory()
    parts: list[Any] = (
        [*cast(tuple[Any, ...], made)] if isinstance(made, tuple) else [made]
    )
    parts += [(), ()]
    return parts[0], _listed(parts[1]), _listed(parts[2])


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [*cast(Sequence[Any], value)]
    return [value]


def run(argv: Sequence[str]) -> int:
    """Export the factory's model as the options say."""
    options = arguments().parse_args(argv)
    outputs = Outputs({"-o": options.output})  # checked before the export
    from hyperoffload.frontend.export_module import export

    model, inputs, targets = load_factory(options.module)
    if options.inputs:
        inputs = tensors_of(options.inputs, options.seed)
    if options.targets:
        targets = tensors_of(options.targets, options.seed + 1)
    if not inputs:
        raise ModuleSpecError(
            f"{options.module} gives no example inputs: pass --inputs SPEC"
        )
    remote: Any = options.remote
    if remote not in ("parameters", "all", "none"):
        remote = [name.strip() for name in remote.split(",") if name.strip()]
    start = time.perf_counter()
    exported = export(
        model,
        inputs,
        mode=options.mode,
        optimizer=options.optimizer,
        remote=remote,
        loss=None if options.loss == "model" else options.loss,
        targets=targets if options.mode == "train" else (),
        tier=options.tier,
    )
    title = f"{options.module} {options.mode} (hyperoffload-gen --module)"
    text = exported.header(title) + exported.text
    emit(
        TOOL,
        Severity.REMARK,
        f"exported {options.module} {options.mode} in {time.perf_counter() - start:.2f} s",
    )
    if options.output is None:
        sys.stdout.write(text)
    else:
        outputs.put(options.output, text)
        outputs.write()
    return 0
