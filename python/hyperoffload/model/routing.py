"""
Routing profiles: which experts a mixture-of-experts router chooses, token
by token, and how often it chooses each (the planner's input). One spec
grammar serves the planner and the simulator (`--routing SPEC`):

- `uniform`: every expert equally likely;
- `zipf:S`: expert popularity proportional to `1 / rank^S`, each layer with
  its own seeded permutation of which expert has which rank (`zipf:0` is
  `uniform`);
- `trace:FILE`: a recorded routing, replayed token by token.

A token's `top_k` experts of a layer are drawn without replacement, each
draw in proportion to the weights of the experts left (successive sampling,
as a softmax router's top-k of noisy scores): every expert gets an
exponential clock of rate equal to its weight, and the first `top_k` to
ring are chosen, in that order.

A trace is a JSON object:

```json
{"experts": 4, "top_k": 1, "tokens": [[[0], [1]], [[2], [1]]]}
```

`experts` (E) and `top_k` (K) as the model routes; `tokens[t][l]` lists the
K distinct experts (integers in [0, E)) that token `t` chose at MoE layer
`l`, every token with the same number of layers. No other field is allowed.

```python
routing = parse_routing("zipf:1.0")
chosen = routing.sample(layers=2, experts=8, top_k=2, tokens=4, seed=0)
chosen[3][1]                      # token 3, layer 1: two distinct experts
routing.frequencies(2, 8, 2)[1]   # layer 1: P(each expert is chosen), summing to 2
```
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard, cast

import numpy as np

RoutingKind = Literal["uniform", "zipf", "trace"]

Chosen = list[list[tuple[int, ...]]]
"""tokens x layers -> the experts chosen, distinct, in the router's order."""


class RoutingError(ValueError):
    """A routing spec or trace that cannot be used (malformed, too short, mismatched)."""


@dataclass(frozen=True)
class Trace:
    """A recorded routing (`trace:FILE`), checked."""

    source: str
    """The file it was read from, named in errors."""
    experts: int
    top_k: int
    tokens: tuple[tuple[tuple[int, ...], ...], ...]

    @property
    def layers(self) -> int:
        return len(self.tokens[0])


@dataclass(frozen=True)
class Routing:
    """
    One routing profile (build it with `parse_routing`).

    >>> parse_routing("zipf:1.2").spec
    'zipf:1.2'
    """

    kind: RoutingKind
    exponent: float = 0.0
    """`zipf`: popularity proportional to 1 / rank^exponent."""
    trace: Trace | None = None

    @property
    def spec(self) -> str:
        """The spec this profile was parsed from."""
        if self.trace is not None:
            return f"trace:{self.trace.source}"
        return "uniform" if self.kind == "uniform" else f"zipf:{self.exponent:g}"

    def sample(
        self,
        layers: int,
        experts: int,
        top_k: int,
        tokens: int,
        seed: int = 0,
        stream: int = 1,
    ) -> Chosen:
        """
        The experts each of `tokens` tokens chooses at each of `layers` MoE
        layers: `top_k` distinct ones of `experts`, the same for a seed (a
        trace replays its first `tokens` tokens and ignores the seed). The
        seed fixes the experts' popularity (`frequencies`) and, with
        `stream`, the draws: another stream is another sample of the same
        profile (a planner's, independent of the run's).

        >>> len(parse_routing("uniform").sample(2, 4, 2, 1, seed=3)[0][1])
        2
        """
        _check_shape(layers, experts, top_k)
        if tokens < 0:
            raise RoutingError(f"cannot sample {tokens} tokens")
        if self.trace is not None:
            return _replay(self.trace, layers, experts, top_k, tokens)
        weights = self._weights(layers, experts, seed)
        rng = np.random.default_rng([seed, stream])
        clocks = rng.exponential(size=(tokens, layers, experts)) / weights[None]
        order = np.argsort(clocks, axis=2, kind="stable")[:, :, :top_k]
        rows = cast(list[list[list[int]]], order.tolist())
        return [[tuple(layer) for layer in token] for token in rows]

    def frequencies(
        self, layers: int, experts: int, top_k: int, seed: int = 0
    ) -> list[list[float]]:
        """
        Per layer, the probability that a token chooses each expert (each
        layer sums to `top_k`), for the permutation `sample` draws with the
        same seed. Exact for `uniform` (`top_k / experts`), for `zipf` with
        `top_k` 1 (`w / sum(w)`) and with `top_k == experts`; otherwise
        approximated: the time the `top_k`-th exponential clock rings is
        replaced by one threshold `tau`, solving `sum(1 - exp(-w * tau)) ==
        top_k`, so an expert of weight `w` is chosen with probability `1 -
        exp(-w * tau)` (within a few hundredths of the sampled share on the
        tests' shapes). A trace's are counted over all its tokens (an
        in-sample profile when the same trace is replayed).

        >>> parse_routing("uniform").frequencies(1, 4, 2)
        [[0.5, 0.5, 0.5, 0.5]]
        """
        _check_shape(layers, experts, top_k)
        if self.trace is not None:
            return _counted(self.trace, layers, experts, top_k)
        weights = self._weights(layers, experts, seed)
        return [_inclusion(row, top_k) for row in weights]

    def _weights(self, layers: int, experts: int, seed: int) -> np.ndarray[Any, Any]:
        """(layers, experts): each expert's weight, by the rank its layer gave it."""
        ranked = 1.0 / np.arange(1, experts + 1, dtype=np.float64) ** self.exponent
        rng = np.random.default_rng([seed, 0])
        rows = [ranked[rng.permutation(experts)] for _ in range(layers)]
        return np.array(rows)


def parse_routing(spec: str) -> Routing:
    """
    `uniform`, `zipf:S` (S a finite number >= 0) or `trace:FILE` (read and
    checked now).

    >>> parse_routing("zipf:0.8").exponent
    0.8
    """
    kind, _, argument = spec.partition(":")
    if kind == "uniform" and not argument:
        return Routing("uniform")
    if kind == "zipf" and argument:
        try:
            exponent = float(argument)
        except ValueError:
            exponent = math.nan
        if not math.isfinite(exponent) or exponent < 0:
            raise RoutingError(
                f"routing '{spec}': the zipf exponent must be a finite number >= 0"
            )
        return Routing("zipf", exponent)
    if kind == "trace" and argument:
        return Routing("trace", trace=load_trace(argument))
    raise RoutingError(
        f"unknown routing '{spec}' (expected uniform, zipf:S or trace:FILE)"
    )


def load_trace(path: str | Path) -> Trace:
    """The trace in the JSON file `path` (format in the module docstring), checked."""
    source = str(path)
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise RoutingError(f"{source}: cannot read the trace: {err.strerror}") from None
    except (json.JSONDecodeError, RecursionError) as err:
        raise RoutingError(f"{source}: the trace is not JSON: {err}") from None
    return parse_trace(data, source)


def parse_trace(data: object, source: str) -> Trace:
    """
    A trace from its JSON value; errors name `source` and the entry.

    >>> parse_trace({"experts": 4, "top_k": 1, "tokens": [[[0], [3]]]}, "t.json").layers
    2
    """
    if not isinstance(data, dict):
        raise RoutingError(f"{source}: a trace is a JSON object, not {_kind(data)}")
    fields = cast(dict[str, Any], data)
    unknown = sorted(set(fields) - {"experts", "top_k", "tokens"})
    if unknown:
        raise RoutingError(f"{source}: unknown field(s) {', '.join(unknown)}")
    experts = _positive(fields, "experts", source)
    top_k = _positive(fields, "top_k", source)
    if top_k > experts:
        raise RoutingError(
            f"{source}: top_k {top_k} is more than the {experts} experts"
        )
    raw_tokens = fields.get("tokens")
    if not isinstance(raw_tokens, list) or not raw_tokens:
        raise RoutingError(f"{source}: 'tokens' must be a non-empty array of tokens")
    tokens = [
        _token(raw, f"tokens[{t}]", experts, top_k, source)
        for t, raw in enumerate(cast(list[Any], raw_tokens))
    ]
    for t, token in enumerate(tokens):
        if len(token) != len(tokens[0]):
            raise RoutingError(
                f"{source}: tokens[{t}] has {len(token)} layers; "
                f"tokens[0] has {len(tokens[0])}"
            )
    return Trace(source, experts, top_k, tuple(tokens))


def _token(
    raw: object, where: str, experts: int, top_k: int, source: str
) -> tuple[tuple[int, ...], ...]:
    if not isinstance(raw, list) or not raw:
        raise RoutingError(f"{source}: {where} must be a non-empty array of layers")
    layers: list[tuple[int, ...]] = []
    for layer, entry in enumerate(cast(list[Any], raw)):
        at = f"{where}[{layer}]"
        if not isinstance(entry, list):
            raise RoutingError(f"{source}: {at} must be an array of experts")
        chosen = cast(list[Any], entry)
        if len(chosen) != top_k:
            raise RoutingError(
                f"{source}: {at} lists {len(chosen)} experts; top_k is {top_k}"
            )
        for expert in chosen:
            if not _is_int(expert) or not 0 <= expert < experts:
                raise RoutingError(
                    f"{source}: {at}: {expert!r} is not an expert "
                    f"(an integer in [0, {experts}))"
                )
        if len(set(chosen)) != len(chosen):
            raise RoutingError(f"{source}: {at} repeats an expert: {chosen}")
        layers.append(tuple(cast(list[int], chosen)))
    return tuple(layers)


def _positive(fields: dict[str, Any], key: str, source: str) -> int:
    value = fields.get(key)
    if not _is_int(value) or value < 1:
        raise RoutingError(f"{source}: '{key}' must be an integer >= 1, not {value!r}")
    return value


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: object) -> str:
    return "an array" if isinstance(value, list) else type(value).__name__


def _check_shape(layers: int, experts: int, top_k: int) -> None:
    if layers < 1 or experts < 1:
        raise RoutingError(
            f"routing needs at least one layer and one expert ({layers}, {experts})"
        )
    if not 1 <= top_k <= experts:
        raise RoutingError(f"top_k {top_k} must be in [1, {experts}]")


def _matching(trace: Trace, layers: int, experts: int, top_k: int) -> None:
    """A clear error if the trace was not recorded on this shape."""
    asked = (layers, experts, top_k)
    recorded = (trace.layers, trace.experts, trace.top_k)
    if asked != recorded:
        raise RoutingError(
            f"{trace.source}: the trace has {recorded[0]} layers, {recorded[1]} "
            f"experts, top_k {recorded[2]}; the model has {layers} layers, "
            f"{experts} experts, top_k {top_k}"
        )


def _replay(trace: Trace, layers: int, experts: int, top_k: int, tokens: int) -> Chosen:
    _matching(trace, layers, experts, top_k)
    if len(trace.tokens) < tokens:
        raise RoutingError(
            f"{trace.source}: the trace has {len(trace.tokens)} tokens; "
            f"{tokens} are needed"
        )
    return [list(token) for token in trace.tokens[:tokens]]


def _counted(trace: Trace, layers: int, experts: int, top_k: int) -> list[list[float]]:
    _matching(trace, layers, experts, top_k)
    counts = [[0] * experts for _ in range(layers)]
    for token in trace.tokens:
        for layer, chosen in enumerate(token):
            for expert in chosen:
                counts[layer][expert] += 1
    return [[c / len(trace.tokens) for c in row] for row in counts]


def _inclusion(weights: np.ndarray[Any, Any], top_k: int) -> list[float]:
    """P(chosen) of each expert when `top_k` are drawn by `weights` (see `frequencies`)."""
    experts = len(weights)
    if top_k == experts:
        return [1.0] * experts
    if top_k == 1 or np.all(weights == weights[0]):
        return cast(list[float], (weights * top_k / weights.sum()).tolist())
    low, high = 0.0, 1.0
    while _expected(weights, high) < top_k:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (
            (middle, high) if _expected(weights, middle) < top_k else (low, middle)
        )
    return cast(list[float], (1 - np.exp(-weights * high)).tolist())


def _expected(weights: np.ndarray[Any, Any], tau: float) -> float:
    """Experts expected to ring by time `tau`."""
    return float((1 - np.exp(-weights * tau)).sum())
