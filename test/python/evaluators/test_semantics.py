"""
The op semantics are written once: both evaluators run the same
implementations (`hyperoffload.evaluators.semantics`), each on its backend.
"""

import numpy as np
import pytest
import torch

from hyperoffload.evaluators.numeric.backend import NUMPY
from hyperoffload.evaluators.numeric.interpreter import IMPLS as NUMERIC_IMPLS
from hyperoffload.evaluators.semantics.backend import OWN, ArrayBackend
from hyperoffload.evaluators.torch.backend import TORCH
from hyperoffload.evaluators.torch.ops import BODY_IMPLS
from hyperoffload.evaluators.torch.ops import IMPLS as TORCH_IMPLS

_SHARED = ("hyperoffload.evaluators.semantics.", "hyperoffload.evaluators.op_registry")


@pytest.mark.parametrize("backend", [NUMPY, TORCH], ids=["numpy", "torch"])
def test_each_backend_defines_exactly_its_own_functions(backend: ArrayBackend) -> None:
    assert set(backend.own) == set(OWN)


def test_both_evaluators_run_the_same_ops() -> None:
    assert set(NUMERIC_IMPLS) == set(BODY_IMPLS)
    assert set(BODY_IMPLS) - set(TORCH_IMPLS) == {"linalg.index"}


@pytest.mark.parametrize("name", sorted(set(NUMERIC_IMPLS) - {"arith.constant"}))
def test_every_op_but_constants_is_written_once(name: str) -> None:
    for impls in (NUMERIC_IMPLS, BODY_IMPLS):
        assert impls[name].__module__.startswith(_SHARED), impls[name].__module__


def test_the_backends_agree_on_nan_and_integer_division() -> None:
    a, b = [1.0, np.nan, -7.0, 7.0], [np.nan, 2.0, 2.0, -2.0]
    x, y = np.asarray(a, np.float32), np.asarray(b, np.float32)
    for name in ("maximumf", "minimumf", "fmax", "fmin", "fmod"):
        got = TORCH.fn(name)(torch.tensor(x), torch.tensor(y)).numpy()
        np.testing.assert_array_equal(NUMPY.fn(name)(x, y), got)
    i, j = np.asarray([7, -7, 7, -7], np.int32), np.asarray([2, 2, -2, -2], np.int32)
    for name in ("floor_div", "div_trunc"):
        got = TORCH.fn(name)(torch.tensor(i), torch.tensor(j)).numpy()
        np.testing.assert_array_equal(NUMPY.fn(name)(i, j), got)
