"""Shared fixtures: a context with every dialect `hyperoffload-opt` knows."""

import pytest
from xdsl.context import Context

from hyperoffload.ir.context import make_context


@pytest.fixture
def ctx() -> Context:
    return make_context()
