"""Strict JSON: a non-finite number is an error naming its place, never `Infinity`."""

import json
import math

import pytest

from hyperoffload.support.strict_json import NonFiniteError, strict_dumps


def test_finite_documents_are_plain_json():
    document = {"a": [1, 2.5, {"b": None}], "c": "x"}
    assert json.loads(strict_dumps(document, indent=1)) == document


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"makespan_s": math.inf}, r"makespan_s is inf"),
        (
            {"results": [{"ok": 1.0}, {"time_s": -math.inf}]},
            r"results\[1\]\.time_s is -inf",
        ),
        ([math.nan], r"\[0\] is nan"),
        (math.inf, r"the document is inf"),
    ],
)
def test_a_non_finite_number_is_named(document: object, where: str):
    with pytest.raises(NonFiniteError, match=where + ", which JSON cannot hold"):
        strict_dumps(document)
