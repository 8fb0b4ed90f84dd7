"""
The two engines read the same program: xDSL's parser and upstream's (with
the walk into xDSL) give the same ops, types, attributes and source lines
on the programs exported from PyTorch (the examples' and test inputs' that
torch-mlir wrote, the kind `engine=auto` reads with upstream's parser), and
the pipeline plans both alike. Value names may differ (upstream's parser
keeps none), so they are cleared before comparing. On hand-written inputs
the two may also differ where MLIR leaves a choice: upstream sorts the keys
of a dictionary attribute, and xDSL builds its own bodies for named linalg
ops (`addf(%mul, %out)` for upstream's `addf(%out, %mul)`).
"""

from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from hyperoffload.api import plan_module
from hyperoffload.ir.context import make_context
from hyperoffload.ir.engines import Engine, parse_with_engine
from hyperoffload.ir.upstream import UpstreamParseError
from hyperoffload.passes.pipeline import PipelinePass

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = sorted(
    (
        path
        for path in [*ROOT.glob("examples/*.mlir"), *ROOT.glob("test/inputs/*.mlir")]
        if "torch-mlir" in path.read_text()[:400]
    ),
    key=lambda p: p.name,
)


def _anonymous(module: ModuleOp) -> str:
    """
    The module's generic print with every value name cleared and each op's
    properties and attributes in one order (the two readers insert them in
    the text's order and in upstream's).
    """
    for op in module.walk():
        op.properties = dict(sorted(op.properties.items()))
        op.attributes = dict(sorted(op.attributes.items()))
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for argument in block.args:
                    argument.name_hint = None
    out = StringIO()
    Printer(out, print_generic_format=True).print_op(module)
    return out.getvalue()


def _lines(module: ModuleOp) -> list[int | None]:
    """The source line of each op, `None` where it has none in the file read."""
    return [
        op.location.line.data
        if isinstance(op.location, FileLineColLoc)
        and "normalised by upstream" not in op.location.filename.data
        else None
        for op in module.walk()
    ]


def _read(path: Path, engine: Engine) -> ModuleOp:
    return parse_with_engine(make_context(), path.read_text(), path.name, engine=engine)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_both_engines_read_the_same_program(path: Path) -> None:
    upstream = _read(path, Engine.UPSTREAM)
    xdsl = _read(path, Engine.XDSL)
    assert [
        (up, ours)
        for up, ours in zip(_lines(upstream), _lines(xdsl), strict=True)
        if None not in (up, ours) and up != ours
    ] == []
    assert _anonymous(upstream) == _anonymous(xdsl)


@pytest.mark.parametrize(
    "name", ["tiny_llama_train.mlir", "tiny_moe_routed_decode.mlir"]
)
def test_both_engines_plan_alike(name: str) -> None:
    path = next(p for p in PROGRAMS if p.name == name)
    planned: list[str] = []
    for engine in (Engine.UPSTREAM, Engine.XDSL):
        module = _read(path, engine)
        before = plan_module(module.clone(), "ascend-910c", None).peak_before_bytes
        PipelinePass(hbm_capacity=int(0.6 * before)).apply(make_context(), module)
        planned.append(_anonymous(module))
    assert planned[0] == planned[1]


def test_the_upstream_engine_refuses_the_custom_forms_of_our_ops() -> None:
    text = "func.func @f(%a: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {\n  %b = hyperoffload.prefetch %a : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>\n  return %b : tensor<4xf32>\n}\n"
    with pytest.raises(UpstreamParseError, match="generic form only"):
        parse_with_engine(make_context(), text, "ours.mlir", engine=Engine.UPSTREAM)
    assert parse_with_engine(make_context(), text, "ours.mlir", engine=Engine.AUTO)


def test_the_upstream_engine_reports_a_located_error() -> None:
    text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : tensor<4xf32>\n}\n"
    with pytest.raises(
        UpstreamParseError, match=r"^bad\.mlir:2:10: error: .*undeclared"
    ):
        parse_with_engine(make_context(), text, "bad.mlir", engine=Engine.UPSTREAM)
    with pytest.raises(DiagnosticException, match=r"^bad\.mlir:2:10: error: "):
        parse_with_engine(make_context(), text, "bad.mlir", engine=Engine.AUTO)
