"""
Export your own `nn.Module` to linalg-on-tensors MLIR whose parameters,
buffers and optimizer states are tagged function arguments:

```python
from hyperoffload.frontend import export
program = export(model, (images,), mode="train", optimizer="adamw",
                 loss="cross_entropy", targets=(labels,), remote="parameters")
program.write("step.mlir")          # or str(program), program.module()
```

The model is traced on fake tensors shaped like `example_inputs` (no data
is read, no weight is copied); parameters and buffers become function
arguments, never constants. Modes:

* ``forward``: ``@forward(*inputs, *params, *buffers) -> (*outputs)``;
* ``train``: ``@train_step(*inputs, *targets, [step], *params, *buffers,
  *states) -> (loss, *params', *states')`` with an optimizer (``sgd``,
  ``adamw``; `hyperoffload.frontend.optimizers`), or ``(loss, *grads)``
  without one (``none``); the loss is ``loss(output, *targets)``
  (``cross_entropy``, ``mse`` or a callable) or, with ``loss=None``, the
  model's own (first) output;
* ``prefill``: a forward pass whose outputs after the first are the KV
  cache, tagged for the pool;
* ``decode``: a forward pass whose inputs after the first are the KV cache
  it reads, and whose outputs after the first are the cache's new entries,
  all tagged for the pool.

Buffers the step updates (BatchNorm's running statistics in training) are
returned after the other results, tagged like their arguments.

What is tagged for the pool (``hyperoffload.tier``) is `remote`:
``"parameters"`` (the default), ``"all"`` (parameters and buffers),
``"none"``, a list of names, or a predicate on ``(name, tensor)``; the marks
of `hyperoffload.frontend.annotations` add to it. Optimizer states are
always tagged (``hyperoffload.category = "optimizer"``).

Training steps are traced through autograd with the project's
decompositions (`hyperoffload.frontend.decompositions`), then functionalised
(in-place updates become new values), so pooling backwards, BatchNorm in
both modes, embedding and NLL backwards lower to linalg with no
``tm_tensor`` left. An op torch-mlir cannot lower is an `ExportError` that
names it and the line of the model that called it.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils import _pytree as pytree

from hyperoffload.frontend.configs import MODES
from hyperoffload.frontend.decompositions import MathAttention, export_decompositions
from hyperoffload.frontend.optimizers import adamw_update, sgd_update
from hyperoffload.frontend.torch_export import (
    FUNC_NAMES,
    KV_ATTR,
    OPTIMIZER_ATTR,
    ExportError,
    Shapes,
    _torch_mlir_fx,  # pyright: ignore[reportPrivateUsage]
    check_train,
)
from hyperoffload.frontend.training import OPTIMIZERS, OptimizerSpec, TrainSpec
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier

Mode = Literal["forward", "train", "prefill", "decode"]
RemoteSelection = str | Sequence[str] | Callable[[str, Tensor], bool]
LossFn = Callable[..., Tensor]
LOSS_NAMES = ("cross_entropy", "mse")


@dataclass(frozen=True)
class ExportedModel:
    """The tagged MLIR of one exported program and the names of its values."""

    text: str
    func_name: str
    arg_names: tuple[str, ...]
    result_names: tuple[str, ...]
    seconds: float

    def __str__(self) -> str:
        return self.text

    def module(self) -> Any:
        """
        The program as an `mlir.ir.Module` of torch-mlir's bindings (the
        project's own MLIR bindings cannot share a process with torch-mlir:
        write the text and read it there).
        """
        ir: Any = __import__("torch_mlir.ir", fromlist=["ir"])
        context = ir.Context()
        context.allow_unregistered_dialects = True
        return ir.Module.parse(self.text, context)

    def header(self, title: str) -> str:
        """A comment block naming the program and every argument and result."""
        lines = [f"// {title}", f"// @{self.func_name} arguments:"]
        lines += [f"//   %arg{i}: {name}" for i, name in enumerate(self.arg_names)]
        lines.append(f"// @{self.func_name} results: {', '.join(self.result_names)}")
        return "\n".join(lines) + "\n"

    def write(self, path: str | Path, title: str = "exported model") -> None:
        """Write the header and the program to `path`."""
        Path(path).write_text(self.header(title) + self.text)


# -------------------------------------------------------------------- selection


def _selector(remote: RemoteSelection) -> Callable[[str, Tensor, bool], bool]:
    """`remote` as a test on (name, tensor, is a parameter)."""
    if callable(remote):
        predicate = remote
        return lambda name, tensor, _: bool(predicate(name, tensor))
    if isinstance(remote, str):
        if remote == "parameters":
            return lambda _, __, is_param: is_param
        if remote == "all":
            return lambda _, __, ___: True
        if remote == "none":
            return lambda _, __, ___: False
        raise ExportError(
            f"unknown remote selection {remote!r} (known: parameters, all, none, "
            "a list of names or a predicate on (name, tensor))"
        )
    names = set(remote)
    return lambda name, _, __: name in names


def _cross_entropy(out: Tensor, target: Tensor) -> Tensor:
    """Cross-entropy over the last dimension (tokens flattened: sequences)."""
    if out.dim() > 2:
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
    return F.cross_entropy(out, target)


def _loss_fn(loss: str | LossFn | None) -> LossFn | None:
    if loss is None or callable(loss):
        return loss
    if loss == "cross_entropy":
        return _cross_entropy
    if loss == "mse":
        return F.mse_loss
    raise ExportError(
        f"unknown loss {loss!r} (known: {', '.join(LOSS_NAMES)}, a callable "
        "(output, *targets) -> loss, or None: the model's output is the loss)"
    )


def _optimizer(optimizer: str | OptimizerSpec) -> OptimizerSpec:
    if isinstance(optimizer, OptimizerSpec):
        return optimizer
    if optimizer not in OPTIMIZERS:
        raise ExportError(
            f"unknown optimizer {optimizer!r} (known: {', '.join(OPTIMIZERS)})"
        )
    return OptimizerSpec(optimizer)


# ----------------------------------------------------------------------- steps


def _flat_outputs(out: Any) -> list[Tensor]:
    leaves = [x for x in pytree.tree_leaves(out) if isinstance(x, Tensor)]
    if not leaves:
        raise ExportError("the model returns no tensor")
    return leaves


class _Step:
    """
    The traced function: ``(*inputs, *targets, [step], *params, *buffers,
    *states)``; the buffers are cloned first (so an update in place is a new
    value) and returned after the other results.
    """

    def __init__(
        self,
        model: nn.Module,
        n_inputs: int,
        n_targets: int,
        params: Sequence[str],
        trainable: Sequence[bool],
        buffers: Sequence[str],
        train: OptimizerSpec | None,
        loss: LossFn | None,
    ) -> None:
        self.model = model
        self.n_inputs = n_inputs
        self.n_targets = n_targets
        self.params = list(params)
        self.trainable = list(trainable)
        self.buffers = list(buffers)
        self.train = train
        self.loss = loss

    def _call(
        self,
        inputs: Sequence[Tensor],
        params: Sequence[Tensor],
        buffers: Sequence[Tensor],
    ) -> Any:
        state = dict(zip(self.params, params, strict=True))
        state.update(zip(self.buffers, buffers, strict=True))
        return torch.func.functional_call(self.model, state, tuple(inputs))

    def __call__(self, *args: Tensor) -> tuple[Tensor, ...]:
        with MathAttention():
            return self._step(*args)

    def _step(self, *args: Tensor) -> tuple[Tensor, ...]:
        inputs = args[: self.n_inputs]
        rest = args[self.n_inputs :]
        targets, rest = rest[: self.n_targets], rest[self.n_targets :]
        spec = self.train
        step = None
        if spec is not None and spec.kind == "adamw":
            step, rest = rest[0], rest[1:]
        n_p, n_b = len(self.params), len(self.buffers)
        params, buffers, states = rest[:n_p], rest[n_p : n_p + n_b], rest[n_p + n_b :]
        buffers = [b.clone() for b in buffers]
        if spec is None:
            with torch.no_grad():
                out = _flat_outputs(self._call(inputs, params, buffers))
            return (*out, *buffers)
        out = _flat_outputs(self._call(inputs, params, buffers))
        loss = out[0] if self.loss is None else self.loss(out[0], *targets)
        if loss.dim() != 0:
            raise ExportError(
                f"the loss must be a scalar, not a tensor of shape {list(loss.shape)}"
            )
        trained = [p for p, t in zip(params, self.trainable, strict=True) if t]
        grads = list(torch.autograd.grad(loss, trained))
        if spec.kind == "none":
            return (loss.detach(), *grads, *buffers)
        with torch.no_grad():
            if spec.kind == "sgd":
                new = [
                    sgd_update(p, g, spec) for p, g in zip(trained, grads, strict=True)
                ]
                return (loss.detach(), *new, *buffers)
            assert step is not None
            n = len(trained)
            m, v = states[:n], states[n:]
            updated = [
                adamw_update(p, g, m_i, v_i, step, spec)
                for p, g, m_i, v_i in zip(trained, grads, m, v, strict=True)
            ]
            return (
                loss.detach(),
                *(p for p, _, _ in updated),
                *(m_i for _, m_i, _ in updated),
                *(v_i for _, _, v_i in updated),
                *buffers,
            )


# ---------------------------------------------------------------------- lowering


_UNLOWERED = re.compile(r"torch\.(aten|prims|prim)\.([\w]+)")


def _model_line(stack: str | None) -> str:
    """The innermost frame of `stack` outside torch and this package."""
    if not stack:
        return ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', stack)
    for path, line, func, code in reversed(frames):
        if "/torch/" in path or "/hyperoffload/frontend/" in path:
            continue
        return f"{path}:{line} (in {func}: {code.strip()})"
    return ""


def _first_line(graph: torch.fx.GraphModule, base: str) -> str:
    """The model line of the first call of the op named `base` (or one beginning so)."""
    for node in graph.graph.nodes:
        name = str(node.target).split(".")
        if node.op == "call_function" and len(name) > 1 and name[1].startswith(base):
            where = _model_line(node.meta.get("stack_trace"))
            if where:
                return where
    return ""


def _located(ops: Sequence[str], graph: torch.fx.GraphModule) -> list[str]:
    """Each unlowered op with the model line that called it, where known."""
    found: list[str] = []
    for op in ops:
        name = op.split(".", 1)[1]
        base = name.split(".")[0]
        where = ""
        for node in graph.graph.nodes:
            target = str(node.target)
            if (
                node.op == "call_function"
                and target.split(".")[1 if "." in target else 0] == base
            ):
                where = _model_line(node.meta.get("stack_trace"))
                if where:
                    break
            if not where and base.endswith("_backward"):
                where = _first_line(graph, base.removesuffix("_backward"))
        found.append(f"{op}" + (f" at {where}" if where else ""))
    return found


def _unsupported(
    message: str, func_name: str, graph: torch.fx.GraphModule
) -> ExportError:
    ops = sorted({f"{d}.{n}" for d, n in _UNLOWERED.findall(message)})
    ops = [f"torch.{op}" for op in ops]
    if not ops:
        first = message.strip().splitlines()[0] if message.strip() else "no message"
        return ExportError(
            f"@{func_name}: torch-mlir cannot lower the program: {first}"
        )
    return ExportError(
        f"@{func_name}: unsupported op(s): "
        + "; ".join(_located(ops, graph))
        + " (see docs/own-model.md, 'When an op is not supported')"
    )


def _mutates(graph: torch.fx.GraphModule) -> bool:
    """Whether the trace updates a tensor in place (an op of a ``_`` name)."""
    for node in graph.graph.nodes:
        if node.op != "call_function":
            continue
        overload = str(node.target).split(".")
        if (
            len(overload) > 1
            and overload[1].endswith("_")
            and not overload[1].startswith("_")
        ):
            return True
    return False


def _aten_views(graph: torch.fx.GraphModule) -> None:
    """
    Replace the prims views of the trace by their aten equivalents
    (functionalisation refuses ops outside aten whose results alias).
    """
    prims: Any = cast(Any, torch.ops).prims
    aten: Any = cast(Any, torch.ops).aten
    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target is prims.squeeze.default:
            node.target = aten.squeeze.dims
    graph.recompile()


def _raw_ops(graph: torch.fx.GraphModule) -> str:
    """
    The ops torch-mlir imports without a definition (``torch.operator``), as
    text: what its failure message leaves out.
    """
    try:
        raw = str(_torch_mlir_fx().stateless_fx_import(graph, output_type="raw"))
    except Exception:  # noqa: BLE001 -- only a better message is at stake
        return ""
    names = re.findall(r'torch\.operator"?\(?.*?name = "(torch\.[\w.]+)"', raw)
    names += re.findall(r'torch\.operator "(torch\.[\w.]+)"', raw)
    return " " + " ".join(sorted(set(names)))


_LOC_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$", re.MULTILINE)
_LOC_FILE = re.compile(r'"([^"]+)":(\d+):\d+')


def _frames(location: str, aliases: dict[str, str]) -> list[tuple[str, int]]:
    """The (file, line) frames of an MLIR location, innermost first."""
    expanded = location
    for _ in range(8):  # aliases refer to aliases: a few rounds resolve them
        expanded = re.sub(r"#loc\d*", lambda m: aliases.get(m.group(0), ""), expanded)
        if "#loc" not in expanded:
            break
    return [(path, int(line)) for path, line in _LOC_FILE.findall(expanded)]


def _locate_in_module(module: Any, ops: Sequence[str]) -> list[str]:
    """Each op of `ops` with the model line torch-mlir's locations give it."""
    import linecache

    text: str = module.operation.get_asm(enable_debug_info=True)
    aliases = dict(_LOC_ALIAS.findall(text))
    lines = text.splitlines()
    found: list[str] = []
    for op in ops:
        where = ""
        for i, line in enumerate(lines):
            if op not in line:
                continue
            for later in lines[i:]:
                match = re.search(
                    r"loc\((#loc\d*|callsite\(.*\)|\".*?\"[^)]*)\)\s*$", later
                )
                if match is None:
                    continue
                for path, number in _frames(match.group(1), aliases):
                    if "/torch/" in path or "/hyperoffload/" in path:
                        continue
                    code = linecache.getline(path, number).strip()
                    where = f" at {path}:{number}" + (f" ({code})" if code else "")
                    break
                break
            break
        found.append(op + where)
    return found


def lower_step(fn: Callable[..., Any], args: Sequence[Tensor], func_name: str) -> str:
    """
    Trace `fn` on the fake tensors `args` through autograd with the
    project's decompositions, functionalise the trace (in-place updates
    become new values) and import it as linalg-on-tensors.
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    table = export_decompositions()
    try:
        traced = make_fx(
            fn, tracing_mode="fake", decomposition_table=table, record_stack_traces=True
        )(*args)
        functional = traced
        if _mutates(traced):
            _aten_views(traced)
            functional = make_fx(
                torch.func.functionalize(traced, remove="mutations"),
                tracing_mode="fake",
                decomposition_table=table,
            )(*args)
    except ExportError:
        raise
    except Exception as err:  # noqa: BLE001 -- any tracing failure is the model's
        where = _model_line("".join(traceback.format_tb(err.__traceback__)))
        at = f" at {where}" if where else ""
        raise ExportError(f"@{func_name}: tracing failed{at}: {err}") from None
    try:
        module: Any = _torch_mlir_fx().stateless_fx_import(
            functional, output_type="linalg-on-tensors", model_name=func_name
        )
    except Exception as err:  # noqa: BLE001 -- torch-mlir raises plain exceptions
        raise _unsupported(str(err) + _raw_ops(functional), func_name, traced) from None
    text = str(module)
    left = re.findall(r"\b(torch\.(?:aten|prim|prims)\.[\w.]+|tm_tensor\.\w+)", text)
    left = [op for op in left if not op.endswith(".yield")] or left
    if left:
        located = _locate_in_module(module, sorted(set(left)))
        raise ExportError(
            f"@{func_name}: unsupported op(s) left by torch-mlir: "
            + "; ".join(located)
            + " (see docs/own-model.md, 'When an op is not supported')"
        )
    return text


# ----------------------------------------------------------------------- tagging


def _tier_attr(tier: str) -> str:
    return f"hyperoffload.tier = #hyperoffload.tier<{tier}>"


def _retag(
    text: str, func_name: str, args: Sequence[list[str]], results: Sequence[list[str]]
) -> str:
    """Attach the attributes `args[i]` and `results[i]` to the function's values."""
    match = re.search(rf"func\.func @{func_name}\((.*?)\) -> (\(.*?\)|[^ ]+) \{{", text)
    if match is None:
        raise ExportError(f"signature of @{func_name} not found")
    arg_text = re.split(r", (?=%arg\d+:)", match.group(1)) if match.group(1) else []
    if len(arg_text) != len(args):
        raise ExportError(
            f"@{func_name} has {len(arg_text)} arguments, the export expected {len(args)}"
        )
    tagged_args = [
        f"{a} {{{', '.join(attrs)}}}" if attrs else a
        for a, attrs in zip(arg_text, args, strict=True)
    ]
    result_text = match.group(2)
    parts = (
        result_text[1:-1].split(", ") if result_text.startswith("(") else [result_text]
    )
    if len(parts) != len(results):
        raise ExportError(
            f"@{func_name} has {len(parts)} results, the export expected {len(results)}"
        )
    tagged_results = [
        f"{r} {{{', '.join(attrs)}}}" if attrs else r
        for r, attrs in zip(parts, results, strict=True)
    ]
    new_results = (
        f"({', '.join(tagged_results)})"
        if len(tagged_results) > 1 or any(results)
        else tagged_results[0]
    )
    header = f"func.func @{func_name}({', '.join(tagged_args)}) -> {new_results} {{"
    return text[: match.start()] + header + text[match.end() :]


# ------------------------------------------------------------------------ export


def _fake(
    tensors: Sequence[Tensor], grad: Sequence[bool] | None = None
) -> list[Tensor]:
    """Fake tensors like `tensors` (of the current fake mode)."""
    out: list[Tensor] = []
    for i, t in enumerate(tensors):
        wants = bool(grad[i]) if grad is not None else False
        out.append(torch.empty(t.shape, dtype=t.dtype, requires_grad=wants))
    return out


def _as_tensors(values: Sequence[Any] | Tensor, what: str) -> list[Tensor]:
    items: list[Any] = [values] if isinstance(values, Tensor) else list(values)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            raise ExportError(f"{what} #{i} is a {type(item).__name__}, not a tensor")
    return cast(list[Tensor], items)


def export(
    model: nn.Module,
    example_inputs: Sequence[Any] | Tensor,
    *,
    mode: Mode = "forward",
    optimizer: str | OptimizerSpec = "none",
    remote: RemoteSelection = "parameters",
    loss: str | LossFn | None = None,
    targets: Sequence[Any] | Tensor = (),
    tier: str = Tier.REMOTE,
) -> ExportedModel:
    """
    Export `mode` of `model` on inputs shaped like `example_inputs` (and,
    training, the loss's `targets`); see the module docstring.
    """
    start = time.perf_counter()
    if mode not in MODES:
        raise ExportError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    if tier not in OFFLOAD_TIERS:
        raise ExportError(f"unknown tier {tier!r} (known: {', '.join(OFFLOAD_TIERS)})")
    spec = _optimizer(optimizer)
    if mode != "train" and spec.kind != "none":
        raise ExportError(f"an optimizer applies to the train mode, not {mode}")
    loss_fn = _loss_fn(loss)
    if mode != "train" and (loss is not None or len(_as_tensors(targets, "target"))):
        raise ExportError(f"a loss and targets apply to the train mode, not {mode}")
    check_train(mode, TrainSpec(spec), Shapes())
    inputs = _as_tensors(example_inputs, "input")
    goals = _as_tensors(targets, "target")
    from hyperoffload.frontend.annotations import marked_remote

    selected = _selector(remote)
    marks = marked_remote(model)
    param_items = list(model.named_parameters())
    buffer_items = list(model.named_buffers())
    train = mode == "train"
    trainable = [train and p.requires_grad for _, p in param_items]
    if train and not any(trainable):
        raise ExportError("a training step needs a parameter that requires grad")
    if train and spec.kind == "adamw":
        wide = [
            n
            for (n, p), t in zip(param_items, trainable, strict=True)
            if t and p.dtype != torch.float32
        ]
        if wide:
            raise ExportError(
                f"adamw on parameters that are not float32 ({', '.join(wide[:3])}): "
                "train in float32 (the zoo's exports keep float32 master weights)"
            )
    func_name = FUNC_NAMES[mode]
    fn = _Step(
        model,
        len(inputs),
        len(goals),
        [n for n, _ in param_items],
        trainable,
        [n for n, _ in buffer_items],
        spec if train else None,
        loss_fn,
    )
    trained = [n for (n, _), t in zip(param_items, trainable, strict=True) if t]
    trained_shapes = [p for (_, p), t in zip(param_items, trainable, strict=True) if t]
    n_states = 2 * len(trained) if spec.kind == "adamw" else 0
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True) as fake_mode:
        args = _fake(inputs) + _fake(goals)
        if train and spec.kind == "adamw":
            args.append(torch.zeros((), dtype=torch.int64))
        args += _fake([p for _, p in param_items], trainable)
        args += _fake([b for _, b in buffer_items])
        args += _fake([p.float() for p in trained_shapes] * 2) if n_states else []
    with fake_mode:
        text = lower_step(fn, args, func_name)

    # names and attributes of the arguments
    tier_attr = _tier_attr(tier)
    arg_names = [f"input.{i}" for i in range(len(inputs))]
    arg_names += [f"target.{i}" for i in range(len(goals))]
    arg_attrs: list[list[str]] = [[] for _ in arg_names]
    if mode == "decode":
        for attrs in arg_attrs[1 : len(inputs)]:
            attrs += [KV_ATTR, tier_attr]
    if train and spec.kind == "adamw":
        arg_names.append("step")
        arg_attrs.append([])
    state_attrs: dict[str, list[str]] = {}
    for name, p in param_items:
        attrs = (
            [tier_attr, *marks.get(name, [])]
            if selected(name, p, True) or name in marks
            else []
        )
        arg_names.append(name)
        arg_attrs.append(attrs)
        state_attrs[name] = attrs
    for name, b in buffer_items:
        attrs = (
            [tier_attr, *marks.get(name, [])]
            if selected(name, b, False) or name in marks
            else []
        )
        arg_names.append(name)
        arg_attrs.append(attrs)
        state_attrs[name] = attrs
    states = (
        [f"{kind}.{n}" for kind in ("exp_avg", "exp_avg_sq") for n in trained]
        if n_states
        else []
    )
    arg_names += states
    arg_attrs += [[OPTIMIZER_ATTR, tier_attr] for _ in states]

    # results
    result_names: list[str]
    result_attrs: list[list[str]]
    if train:
        if spec.kind == "none":
            result_names = ["loss", *(f"grad.{n}" for n in trained)]
            result_attrs = [[] for _ in result_names]
        else:
            result_names = ["loss", *trained, *states]
            result_attrs = [[], *(state_attrs[n] for n in trained)]
            result_attrs += [[OPTIMIZER_ATTR, tier_attr] for _ in states]
    else:
        n_out = _count_results(text, func_name) - len(buffer_items)
        result_names = [f"output.{i}" for i in range(n_out)]
        result_attrs = [[] for _ in result_names]
        if mode in ("prefill", "decode"):
            for attrs in result_attrs[1:]:
                attrs += [KV_ATTR, tier_attr]
    result_names += [b for b, _ in buffer_items]
    result_attrs += [state_attrs[b] for b, _ in buffer_items]
    text = _retag(text, func_name, arg_attrs, result_attrs)
    return ExportedModel(
        text,
        func_name,
        tuple(arg_names),
        tuple(result_names),
        time.perf_counter() - start,
    )


def _count_results(text: str, func_name: str) -> int:
    match = re.search(rf"func\.func @{func_name}\(.*?\) -> (\(.*?\)|[^ ]+) \{{", text)
    if match is None:
        raise ExportError(f"signature of @{func_name} not found")
    results = match.group(1)
    return len(results[1:-1].split(", ")) if results.startswith("(") else 1
