"""`hyperoffload-opt`: xDSL's `xdsl-opt` with the HyperOffload dialect and passes."""

import argparse
import io
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.engines import UPSTREAM_FROM_BYTES, Engine, parse_with_engine
from hyperoffload.support.outputs import Outputs
from hyperoffload.tools.command_line import report_error, run_reporting_errors
from hyperoffload.tools.pass_help import PassFactory, describe_passes

DESCRIPTION = """\
HyperOffload optimizer driver. Reads MLIR in custom or generic form: every
dialect xDSL knows plus `hyperoffload`. Text xDSL cannot read (upstream-only
ops such as linalg.batch_matmul and other named linalg ops, syntax xDSL lacks,
torch-mlir output) is parsed by upstream MLIR, its named linalg ops are
generalised and it is read back in generic form. Diagnostics are reported as
file:line:col."""


class _PendingOutput(io.StringIO):
    """The output of a run, written to its file only once the run succeeded."""

    def close(self) -> None:
        pass  # the driver closes its output stream whether or not the run failed


class _PrintAndExit(argparse.Action):
    """An option that prints a text (the passes and their options) and exits 0."""

    def __init__(
        self, option_strings: list[str], dest: str, text: Callable[[], str], help: str
    ):
        super().__init__(option_strings, dest, nargs=0, help=help)
        self.text = text

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(self.text())
        parser.exit()


class HyperoffloadOptMain(xDSLOptMain):
    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        """xDSL's arguments; the help and `--list-passes` describe our passes first."""
        super().register_all_arguments(arg_parser)
        ours = self.our_passes()
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        described = arg_parser.description
        format_help = arg_parser.format_help

        def help_describing_ours() -> str:
            """The help, our passes described (importing each: only when asked)."""
            arg_parser.description = (
                f"{described}\n\nHyperOffload's passes (-p):\n\n"
                + textwrap.indent(describe_passes(ours), "  ")
            )
            return format_help()

        arg_parser.format_help = help_describing_ours
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if "--passes" in action.option_strings:
                action.help = (
                    f"Pass pipeline, e.g. 'hyperoffload-pipeline{{hbm-capacity=32GB}}'. "
                    f"Ours: {', '.join(sorted(ours))}; their options: --list-passes; "
                    "xDSL's passes are available too: --all-passes."
                )
        arg_parser.add_argument(
            "--list-passes",
            action=_PrintAndExit,
            text=lambda: describe_passes(ours),
            help="List HyperOffload's passes with their options and exit.",
        )
        arg_parser.add_argument(
            "--all-passes",
            action=_PrintAndExit,
            text=lambda: "\n".join(sorted(self.available_passes)) + "\n",
            help="List every pass name, xDSL's included, and exit.",
        )
        arg_parser.add_argument(
            "--engine",
            choices=[engine.value for engine in Engine],
            default=Engine.AUTO.value,
            help=(
                "The parser that reads the input: upstream MLIR's (C++, fast on "
                "large programs; ops of hyperoffload in generic form only) or "
                f"xDSL's; auto: upstream's from {UPSTREAM_FROM_BYTES // 1024} KiB "
                "of text, else xDSL's (default: auto)."
            ),
        )

    @staticmethod
    def our_passes() -> dict[str, PassFactory]:
        from hyperoffload.passes import get_all_passes

        return get_all_passes()

    def register_all_dialects(self):
        from hyperoffload.ir.context import all_dialects

        for name, factory in all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in self.our_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        """xDSL's targets and ours; `FastMLIRTarget` prints MLIR text."""
        from hyperoffload.targets import FastMLIRTarget, get_all_targets

        super().register_all_targets()
        self.available_targets.update(get_all_targets())
        self.available_targets[FastMLIRTarget.name] = lambda: FastMLIRTarget

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        return parse_with_engine(
            self.ctx,
            chunk.read().decode(),
            self.get_input_name(),
            start_offset,
            not self.args.no_implicit_module,
            self.args.engine,
        )

    def prepare_output(self) -> IO[str]:
        """With `-o`, the text is kept until the run succeeds (nothing lost on failure)."""
        if self.args.output_file is None:
            return sys.stdout
        self.pending_output = _PendingOutput()
        return self.pending_output

    def run(self) -> None:
        """Process the input; `exit_status` says how it went (1: a chunk failed)."""
        self.pending_output: _PendingOutput | None = None
        args = self.args
        output = None if args.output_file is None else Path(args.output_file)
        outputs = Outputs({"-o": output})  # checked before the run
        expects_errors = args.verify_diagnostics or args.parsing_diagnostics
        if not args.split_input_file or expects_errors or args.shrink:
            super().run()
            status = 0
        else:
            status = self._run_every_chunk()
        if output is not None and self.pending_output is not None and status == 0:
            outputs.put(output, self.pending_output.getvalue())
            outputs.write()
        self.exit_status = status

    def _run_every_chunk(self) -> int:
        """
        With `--split-input-file`, every chunk is processed and every error
        reported, as `mlir-opt` does; the status is the worst chunk's.
        """
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        status = 0
        for index, (chunk, offset) in enumerate(chunks):
            try:
                if index > 0:
                    output.write("// -----\n")
                module = self.parse_chunk(chunk, file_extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    output.write(self.output_resulting_program(module))
            except (Exception, ArgSpecParseError) as err:  # noqa: BLE001 -- reported
                status = max(status, report_error("hyperoffload-opt", err))
            finally:
                chunk.close()
        output.flush()
        return status

    def setup_pipeline(self):
        """xDSL's pipeline, verified between passes by `_between_passes`."""
        super().setup_pipeline()
        self.pipeline = PassPipeline(self.pipeline.passes, self._between_passes)
        self._pass_started = time.perf_counter()

    def _between_passes(
        self, done: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        """
        As xDSL's callback (`--time-passes`, `--print-between-passes`), but
        the module is verified (`verify_module`) only between two passes:
        `apply_passes` verifies it before the first and after the last.
        """
        args = self.args
        if args.time_passes and done is not None:
            took = time.perf_counter() - self._pass_started
            print(f"Pass {done.name} took {took} seconds")
        if done is not None and following is not None:
            if not args.disable_verify:
                verify_module(module)
            if args.print_between_passes:
                print(f"IR after {done.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
        if args.time_passes and following is not None:
            self._pass_started = time.perf_counter()

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_module(prog)
        super().apply_passes(prog)
        if not self.args.disable_verify and self.pipeline.passes:
            verify_module(prog)


def main(args: Sequence[str] | None = None) -> int:
    def run() -> int:
        driver = HyperoffloadOptMain(description=DESCRIPTION, args=args)
        driver.run()
        return driver.exit_status

    return run_reporting_errors("hyperoffload-opt", run)


if __name__ == "__main__":
    sys.exit(main())
