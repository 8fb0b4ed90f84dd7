"""
`hyperoffload.model.routing`: the spec grammar, seeded samplers, frequencies
and recorded traces with their errors.
"""

import json
from pathlib import Path

import pytest

from hyperoffload.model.routing import (
    Routing,
    RoutingError,
    load_trace,
    parse_routing,
    parse_trace,
)

TRACE = {"experts": 4, "top_k": 2, "tokens": [[[0, 1], [3, 2]], [[1, 2], [3, 0]]]}


def _shares(
    chosen: list[list[tuple[int, ...]]], layers: int, experts: int
) -> list[list[float]]:
    """The fraction of tokens choosing each expert, per layer."""
    counts = [[0] * experts for _ in range(layers)]
    for token in chosen:
        for layer, picked in enumerate(token):
            for expert in picked:
                counts[layer][expert] += 1
    return [[c / len(chosen) for c in row] for row in counts]


def test_specs() -> None:
    assert parse_routing("uniform") == Routing("uniform")
    assert parse_routing("zipf:1.5").exponent == 1.5
    assert parse_routing("zipf:1.5").spec == "zipf:1.5"
    assert parse_routing("uniform").spec == "uniform"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("zipf", "unknown routing 'zipf'"),
        ("zipf:", "unknown routing"),
        ("zipf:-1", "finite number >= 0"),
        ("zipf:abc", "finite number >= 0"),
        ("zipf:inf", "finite number >= 0"),
        ("uniform:2", "unknown routing"),
        ("powerlaw:1", "expected uniform, zipf:S or trace:FILE"),
        ("trace:", "unknown routing"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(RoutingError, match=message):
        parse_routing(spec)


@pytest.mark.parametrize("spec", ["uniform", "zipf:1.2"])
def test_sample_is_distinct_and_seeded(spec: str) -> None:
    routing = parse_routing(spec)
    chosen = routing.sample(layers=3, experts=8, top_k=3, tokens=20, seed=7)
    assert len(chosen) == 20
    assert all(len(token) == 3 for token in chosen)
    for token in chosen:
        for picked in token:
            assert len(picked) == 3
            assert len(set(picked)) == 3
            assert all(0 <= e < 8 for e in picked)
    assert routing.sample(3, 8, 3, 20, seed=7) == chosen
    assert routing.sample(3, 8, 3, 20, seed=8) != chosen
    # a longer sample starts with the shorter one
    assert routing.sample(3, 8, 3, 25, seed=7)[:20] == chosen


def test_zipf_is_skewed() -> None:
    """
    zipf:1 over 8 experts, top-1: the most popular expert has 1 / H(8) =
    0.368 of the tokens, against 0.125 under uniform routing.
    """
    layers, experts = 2, 8
    zipf = parse_routing("zipf:1.0")
    shares = _shares(zipf.sample(layers, experts, 1, 4000, seed=3), layers, experts)
    uniform = _shares(
        parse_routing("uniform").sample(layers, experts, 1, 4000, seed=3),
        layers,
        experts,
    )
    expected = zipf.frequencies(layers, experts, 1, seed=3)
    for layer in range(layers):
        top = max(range(experts), key=lambda e: expected[layer][e])
        assert expected[layer][top] == pytest.approx(
            1 / sum(1 / r for r in range(1, 9))
        )
        assert shares[layer][top] > 0.33
        assert max(uniform[layer]) < 0.16
        assert max(range(experts), key=lambda e: shares[layer][e]) == top


def test_zipf_ranks_differ_per_layer() -> None:
    frequencies = parse_routing("zipf:1.0").frequencies(4, 16, 1, seed=0)
    tops = {max(range(16), key=lambda e: row[e]) for row in frequencies}
    assert len(tops) > 1
    # the permutation follows the seed, as the sampler's does
    assert parse_routing("zipf:1.0").frequencies(4, 16, 1, seed=1) != frequencies


def test_uniform_frequencies_are_exact() -> None:
    assert parse_routing("uniform").frequencies(2, 8, 2) == [[0.25] * 8] * 2
    assert parse_routing("zipf:0").frequencies(1, 4, 3) == [[0.75] * 4]
    assert parse_routing("zipf:2").frequencies(1, 4, 4) == [[1.0] * 4]


def test_zipf_frequencies_approximate_the_sampler() -> None:
    """The threshold approximation (top-2 of 8) within 0.04 of 4000 sampled tokens."""
    zipf = parse_routing("zipf:1.0")
    expected = zipf.frequencies(2, 8, 2, seed=5)
    shares = _shares(zipf.sample(2, 8, 2, 4000, seed=5), 2, 8)
    for layer in range(2):
        assert sum(expected[layer]) == pytest.approx(2)
        for e in range(8):
            assert shares[layer][e] == pytest.approx(expected[layer][e], abs=0.04)


def test_trace_replays(tmp_path: Path) -> None:
    path = tmp_path / "routing.json"
    path.write_text(json.dumps(TRACE))
    routing = parse_routing(f"trace:{path}")
    assert routing.spec == f"trace:{path}"
    assert routing.sample(2, 4, 2, 2) == [[(0, 1), (3, 2)], [(1, 2), (3, 0)]]
    assert routing.sample(2, 4, 2, 1, seed=9) == [[(0, 1), (3, 2)]]
    # counted: expert 1 of layer 0 in both tokens, expert 3 of layer 1 in both
    assert routing.frequencies(2, 4, 2) == [[0.5, 1.0, 0.5, 0.0], [0.5, 0.0, 0.5, 1.0]]


def test_trace_too_short_or_mismatched() -> None:
    routing = Routing("trace", trace=parse_trace(TRACE, "t.json"))
    with pytest.raises(
        RoutingError, match=r"t.json: the trace has 2 tokens; 3 are needed"
    ):
        routing.sample(2, 4, 2, 3)
    with pytest.raises(
        RoutingError, match="the trace has 2 layers, 4 experts, top_k 2"
    ):
        routing.sample(3, 4, 2, 1)
    with pytest.raises(RoutingError, match="the model has 2 layers, 8 experts"):
        routing.frequencies(2, 8, 2)
    with pytest.raises(RoutingError, match="top_k 1"):
        routing.sample(2, 4, 1, 1)


BAD_TRACES: list[tuple[object, str]] = [
    ([], "a trace is a JSON object, not an array"),
    ({"experts": 4, "top_k": 1}, "'tokens' must be a non-empty array"),
    (
        {"top_k": 1, "tokens": [[[0]]]},
        "'experts' must be an integer >= 1, not None",
    ),
    ({**TRACE, "layers": 2}, r"unknown field\(s\) layers"),
    ({**TRACE, "top_k": 5}, "top_k 5 is more than the 4 experts"),
    ({**TRACE, "experts": True}, "'experts' must be an integer >= 1"),
    (
        {**TRACE, "tokens": [[[0, 1]], [[0, 1], [2, 3]]]},
        r"tokens\[1\] has 2 layers",
    ),
    ({**TRACE, "tokens": [[[0, 1], [2]]]}, r"tokens\[0\]\[1\] lists 1 experts"),
    (
        {**TRACE, "tokens": [[[0, 4], [2, 3]]]},
        r"tokens\[0\]\[0\]: 4 is not an expert",
    ),
    ({**TRACE, "tokens": [[[0, 1], [2, True]]]}, r"tokens\[0\]\[1\]: True is not"),
    (
        {**TRACE, "tokens": [[[1, 1], [2, 3]]]},
        r"tokens\[0\]\[0\] repeats an expert",
    ),
    ({**TRACE, "tokens": [[]]}, r"tokens\[0\] must be a non-empty array of layers"),
    ({**TRACE, "tokens": [[3]]}, r"tokens\[0\]\[0\] must be an array of experts"),
]


@pytest.mark.parametrize(("data", "message"), BAD_TRACES)
def test_trace_errors(data: object, message: str) -> None:
    with pytest.raises(RoutingError, match=r"^bad\.json: " + message):
        parse_trace(data, "bad.json")


def test_trace_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(RoutingError, match=r"broken\.json: the trace is not JSON"):
        load_trace(broken)
    with pytest.raises(RoutingError, match=r"missing\.json: cannot read the trace"):
        parse_routing(f"trace:{tmp_path / 'missing.json'}")
