"""`hyperoffload-opt`: xDSL's `xdsl-opt` with the HyperOffload dialect and passes."""

import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

from hyperoffload.diagnostics import verify_module
from hyperoffload.parsing import parse_mlir
from hyperoffload.tools.command_line import run_reporting_errors

DESCRIPTION = """\
HyperOffload optimizer driver. Reads MLIR in custom or generic form: every
dialect xDSL knows plus `hyperoffload`. Text xDSL cannot read (upstream-only
ops such as linalg.batch_matmul and other named linalg ops, syntax xDSL lacks,
torch-mlir output) is parsed by upstream MLIR, its named linalg ops are
generalised and it is read back in generic form. Diagnostics are reported as
file:line:col."""


class HyperoffloadOptMain(xDSLOptMain):
    def register_all_dialects(self):
        from xdsl.universe import Universe

        from hyperoffload.dialects.hyperoffload import Hyperoffload
        from hyperoffload.xdsl_fixes import linalg_round_trip

        dialects = dict(Universe.get_multiverse().all_dialects)
        dialects["linalg"] = linalg_round_trip
        dialects.setdefault(Hyperoffload.name, lambda: Hyperoffload)  # if not installed
        for name, factory in dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        from hyperoffload.passes import get_all_passes

        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        from hyperoffload.targets import get_all_targets

        super().register_all_targets()
        self.available_targets.update(get_all_targets())

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        return parse_mlir(
            self.ctx,
            chunk.read().decode(),
            self.get_input_name(),
            start_offset,
            not self.args.no_implicit_module,
        )

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_module(prog)
        super().apply_passes(prog)
        if not self.args.disable_verify and self.pipeline.passes:
            verify_module(prog)


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(
        "hyperoffload-opt",
        lambda: HyperoffloadOptMain(description=DESCRIPTION, args=args).run(),
    )


if __name__ == "__main__":
    sys.exit(main())
