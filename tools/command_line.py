"""Shared entry-point wrapper: user errors become diagnostics, never tracebacks."""

import sys
from collections.abc import Callable

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from hyperoffload.ir.diagnostics import Severity, format_diagnostic
from hyperoffload.support.collector import fewer_collections


def format_parse_error(err: ParseError) -> str:
    """`file:line:col: error: message`, then the source line with carets."""
    context = err.span.print_with_context().splitlines()[1:]
    located = format_diagnostic(str(err.span.get_location()), Severity.ERROR, err.msg)
    return "\n".join([located, *context])


def run_reporting_errors(tool: str, run: Callable[[], int | None]) -> int:
    """
    Run a tool's main function; report user errors on stderr and return the
    exit status (the function's own, 0 if it returns None; 1 on a diagnostic,
    2 on an internal error).
    """
    try:
        with fewer_collections():
            status = run()
    except KeyboardInterrupt:
        return 130
    except (Exception, ArgSpecParseError) as err:  # noqa: BLE001 -- never a traceback
        return report_error(tool, err)
    return status or 0


def report_error(tool: str, err: BaseException) -> int:
    """Print `err` as a diagnostic on stderr; the exit status it calls for."""
    if isinstance(err, ParseError):
        print(format_parse_error(err), file=sys.stderr)
        return 1
    if isinstance(err, ArgSpecParseError):  # a malformed -p pipeline
        print(
            format_diagnostic(tool, Severity.ERROR, str(err).rstrip()), file=sys.stderr
        )
        return 1
    if isinstance(err, DiagnosticException):
        # A pass that failed on a malformed option or hardware file says
        # what is wrong but not where: it is the tool's error then.
        message = str(err).rstrip()
        if "error:" not in message:
            message = format_diagnostic(tool, Severity.ERROR, message)
        print(message, file=sys.stderr)
        return 1
    if isinstance(err, OSError | ValueError):
        located = ": error: " in str(err)  # already `file:line:col: error: ...`
        where = getattr(err, "where", None)  # the place a bare message is about
        if not isinstance(where, str) or where == "<unknown>":
            where = tool
        message = (
            str(err) if located else format_diagnostic(where, Severity.ERROR, str(err))
        )
        print(message, file=sys.stderr)
        return 1
    print(
        format_diagnostic(tool, "internal error", f"{type(err).__name__}: {err}")
        + "\n(please report this with the input that caused it)",
        file=sys.stderr,
    )
    return 2
