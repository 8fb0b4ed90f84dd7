"""The passes of HyperOffload, registered lazily by name."""

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return every HyperOffload pass by its `-p` name; imports are deferred."""

    def get_assign_offsets():
        from hyperoffload.passes.assign_offsets import AssignOffsetsPass

        return AssignOffsetsPass

    def get_test_print_layout():
        from hyperoffload.passes.test_print_layout import TestPrintLayoutPass

        return TestPrintLayoutPass

    def get_move_window():
        from hyperoffload.passes.move_window import MoveWindowPass

        return MoveWindowPass

    def get_pipeline():
        from hyperoffload.passes.pipeline import PipelinePass

        return PipelinePass

    def get_strip():
        from hyperoffload.passes.strip import StripPass

        return StripPass

    def get_convert_to_linalg():
        from hyperoffload.passes.convert_to_linalg import (
            ConvertHyperoffloadToLinalgPass,
        )

        return ConvertHyperoffloadToLinalgPass

    def get_insert():
        from hyperoffload.passes.insert import InsertPass

        return InsertPass

    def get_test_print_lifetimes():
        from hyperoffload.passes.test_print_lifetimes import TestPrintLifetimesPass

        return TestPrintLifetimesPass

    def get_verify():
        from hyperoffload.passes.verify import VerifyPass

        return VerifyPass

    return {
        "convert-hyperoffload-to-linalg": get_convert_to_linalg,
        "hyperoffload-assign-offsets": get_assign_offsets,
        "hyperoffload-insert": get_insert,
        "hyperoffload-move-window": get_move_window,
        "hyperoffload-pipeline": get_pipeline,
        "hyperoffload-strip": get_strip,
        "hyperoffload-verify": get_verify,
        "test-print-layout": get_test_print_layout,
        "test-print-lifetimes": get_test_print_lifetimes,
    }


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass `hyperoffload-opt` knows: xDSL's and ours, lazily by name."""
    return {**Universe.get_multiverse().all_passes, **get_all_passes()}
