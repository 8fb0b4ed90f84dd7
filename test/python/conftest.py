"""Shared fixtures: a context with every dialect `hyperoffload-opt` knows."""

import pytest
from xdsl.context import Context

from hyperoffload.tools.hyperoffload_opt import HyperoffloadOptMain


@pytest.fixture(scope="session")
def opt_main() -> HyperoffloadOptMain:
    return HyperoffloadOptMain(args=[])


@pytest.fixture
def ctx(opt_main: HyperoffloadOptMain) -> Context:
    return opt_main.ctx.clone()
