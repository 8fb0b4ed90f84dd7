"""
The routed-expert model of a MoE decode step: its MoE layers (compute
before the router and after the experts, each expert's weight bytes and
compute time), `top_k`, and the rest of the step; built by hand
(`MoEStep.uniform`), from a model's dimensions (`MoEStep.from_config`,
priced by the roofline) or read from a routed export
(`hyperoffload.analysis.moe_step`).

```python
step = MoEStep.uniform(layers=2, experts=8, top_k=2, expert_bytes=2**20,
                       expert_s=1e-4, pre_s=5e-4, post_s=1e-4)
step.expert_weight_bytes()   # 16 MiB
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects.builtin import Float8E4M3FNType, bf16, f16, f32, i8
from xdsl.ir import Attribute

from hyperoffload.ir.sizes import element_bytes
from hyperoffload.model.hardware import Hardware

Key = tuple[int, int]
"""(MoE layer, expert)."""


class ExpertError(ValueError):
    """A routed-expert run that cannot run (a budget below one expert per layer, ...)."""


@dataclass(frozen=True)
class MoELayer:
    """One MoE layer of a decode step, for one token."""

    pre_s: float
    """Compute before the router: attention, norms, the router."""
    post_s: float
    """Compute after the routed experts: shared experts, the combine."""
    expert_bytes: tuple[int, ...]
    """Each routed expert's weight bytes."""
    expert_s: tuple[float, ...]
    """
    Each routed expert's share of the layer's grouped expert kernels for one
    token: its kernels' roofline time, without launch overhead.
    """
    launch_s: float = 0.0
    """
    Launch overhead of one grouped launch of the layer's expert kernels (one
    per kernel of an expert: gate, up, down, ...), paid by the held experts
    together and again by each expert run when its fetch lands.
    """


@dataclass(frozen=True)
class MoEStep:
    """
    A MoE decode step: its MoE layers and how many experts each token routes to.

    >>> step = MoEStep.uniform(2, 4, 1, expert_bytes=1000, expert_s=1e-5)
    >>> step.experts, step.expert_weight_bytes()
    (4, 8000)
    """

    layers: tuple[MoELayer, ...]
    top_k: int
    other_s: float = 0.0
    """Compute per token outside the MoE layers (dense layers, embedding, head), first."""

    def __post_init__(self) -> None:
        if not self.layers:
            raise ExpertError("a MoE step needs at least one MoE layer")
        for index, layer in enumerate(self.layers):
            _check_layer(layer, index, self.experts, self.top_k)
        if self.other_s < 0:
            raise ExpertError(f"other_s cannot be negative ({self.other_s})")

    @property
    def experts(self) -> int:
        """Routed experts per layer (the same in every layer)."""
        return len(self.layers[0].expert_bytes)

    def expert_weight_bytes(self) -> int:
        """All routed experts' weights, over all the layers."""
        return sum(sum(layer.expert_bytes) for layer in self.layers)

    def compute_per_token_s(self, frequencies: Sequence[Sequence[float]]) -> float:
        """
        The expected compute time of a token when experts are chosen with
        `frequencies`, every chosen expert held (one grouped launch a layer).
        """
        return self.other_s + sum(
            layer.pre_s
            + layer.post_s
            + layer.launch_s
            + sum(p * t for p, t in zip(chosen, layer.expert_s, strict=True))
            for layer, chosen in zip(self.layers, frequencies, strict=True)
        )

    @staticmethod
    def uniform(
        layers: int,
        experts: int,
        top_k: int,
        expert_bytes: int,
        expert_s: float,
        pre_s: float = 0.0,
        post_s: float = 0.0,
        other_s: float = 0.0,
        launch_s: float = 0.0,
    ) -> MoEStep:
        """A step whose layers are alike and whose experts are alike."""
        layer = MoELayer(
            pre_s, post_s, (expert_bytes,) * experts, (expert_s,) * experts, launch_s
        )
        return MoEStep((layer,) * layers, top_k, other_s)

    @staticmethod
    def from_config(
        cfg: MoEConfig, hardware: Hardware, kv_len: int, dtype: str = "bf16"
    ) -> MoEStep:
        """
        The decode step (batch 1, `kv_len` cached positions) of a MoE model
        configuration (`hyperoffload.frontend.configs`), each kernel priced
        by `roofline_s`. An approximation: norms, activations, residuals and
        the combine are taken as fused into their neighbours; a layer's
        attention is its QKV projection, the attention over the cache and
        the output projection; the router is one GEMV; the routed experts
        (SwiGLU) run as two grouped GEMVs, gate-and-up and down (as
        grouped-GEMM MoE kernels do): each expert's share is its GEMVs'
        roofline time without launch, `launch_s` two launches; shared
        experts run after the routed ones; the dense layers and the LM head
        form `other_s`.

        ```python
        MoEStep.from_config(CONFIGS["deepseek-v3"], load_hardware("ascend-910c"), 4096)
        ```
        """
        if cfg.n_experts < 1 or cfg.top_k < 1:
            raise ExpertError("the configuration has no routed experts (not a MoE)")
        width = _element_bytes(dtype)
        hidden = cfg.hidden

        def gemv(rows: int, cols: int) -> float:
            return roofline_s(hardware, 2.0 * rows * cols, rows * cols * width, dtype)

        def ffn(inner: int) -> tuple[int, float]:
            """A SwiGLU FFN's weight bytes and its time for one token."""
            return 3 * hidden * inner * width, gemv(hidden, 2 * inner) + gemv(
                inner, hidden
            )

        heads = cfg.n_heads * cfg.head_dim
        cache = 2 * cfg.n_kv_heads * cfg.head_dim * kv_len * width
        attention = (
            gemv(hidden, heads + 2 * cfg.n_kv_heads * cfg.head_dim)
            + roofline_s(
                hardware,
                4.0 * heads * kv_len,
                cache,
                dtype,
                hardware.attention_efficiency,
            )
            + gemv(heads, hidden)
        )
        expert_bytes, expert_s = ffn(cfg.expert_ffn)
        launch_s = 2 * hardware.op_overhead_s  # gate-and-up, down
        shared_s = cfg.n_shared_experts * expert_s
        moe_layers = cfg.n_layers - cfg.n_dense_layers
        layer = MoELayer(
            attention + gemv(hidden, cfg.n_experts),
            shared_s,
            (expert_bytes,) * cfg.n_experts,
            (expert_s - launch_s,) * cfg.n_experts,
            launch_s,
        )
        other = cfg.n_dense_layers * (attention + ffn(cfg.ffn_hidden)[1]) + gemv(
            hidden, cfg.vocab_size
        )
        return MoEStep((layer,) * moe_layers, cfg.top_k, other)


class MoEConfig(Protocol):
    """What `MoEStep.from_config` reads of a model configuration."""

    @property
    def vocab_size(self) -> int: ...
    @property
    def hidden(self) -> int: ...
    @property
    def n_layers(self) -> int: ...
    @property
    def n_heads(self) -> int: ...
    @property
    def n_kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def ffn_hidden(self) -> int: ...
    @property
    def n_experts(self) -> int: ...
    @property
    def top_k(self) -> int: ...
    @property
    def n_shared_experts(self) -> int: ...
    @property
    def expert_ffn(self) -> int: ...
    @property
    def n_dense_layers(self) -> int: ...


_ELEMENT_TYPES: dict[str, Attribute] = {
    "f32": f32,
    "bf16": bf16,
    "f16": f16,
    "f8": Float8E4M3FNType(),
    "i8": i8,
}
"""The element type of each dtype a configuration may be priced in."""


def _element_bytes(dtype: str) -> int:
    """Bytes of one `dtype` element (`hyperoffload.ir.sizes`)."""
    size = element_bytes(_ELEMENT_TYPES[dtype]) if dtype in _ELEMENT_TYPES else None
    if size is None:
        raise ExpertError(
            f"unknown dtype '{dtype}' (expected one of {', '.join(_ELEMENT_TYPES)})"
        )
    return size


def roofline_s(
    hardware: Hardware,
    flops: float,
    nbytes: int,
    dtype: str,
    efficiency: float | None = None,
) -> float:
    """
    One kernel's time by `Hardware.kernel_s` (the roofline
    `hyperoffload.analysis.cost` also prices kernels with), its FLOPs at
    `dtype`'s peak times `efficiency` (default `compute_efficiency`).
    """
    return hardware.kernel_s(hardware.compute_s(flops, dtype, efficiency), nbytes)


def _check_layer(layer: MoELayer, index: int, experts: int, top_k: int) -> None:
    where = f"MoE layer {index}"
    if len(layer.expert_bytes) != experts or len(layer.expert_s) != experts:
        raise ExpertError(
            f"{where}: every layer needs {experts} expert sizes and times "
            f"(it has {len(layer.expert_bytes)} and {len(layer.expert_s)})"
        )
    if not 1 <= top_k <= experts:
        raise ExpertError(f"{where}: top_k {top_k} must be in [1, {experts}]")
    if any(b <= 0 for b in layer.expert_bytes):
        raise ExpertError(f"{where}: every expert needs a positive size")
    if min(layer.pre_s, layer.post_s, layer.launch_s, *layer.expert_s) < 0:
        raise ExpertError(f"{where}: compute times cannot be negative")
