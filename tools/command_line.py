"""Shared entry-point wrapper: user errors become diagnostics, never tracebacks."""

import sys
from collections.abc import Callable

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError


def format_parse_error(err: ParseError) -> str:
    """`file:line:col: error: message`, then the source line with carets."""
    context = err.span.print_with_context().splitlines()[1:]
    return "\n".join([f"{err.span.get_location()}: error: {err.msg}", *context])


def run_reporting_errors(tool: str, run: Callable[[], int | None]) -> int:
    """
    Run a tool's main function; report user errors on stderr and return the
    exit status (the function's own, 0 if it returns None; 1 on a diagnostic,
    2 on an internal error).
    """
    try:
        status = run()
    except ParseError as err:
        print(format_parse_error(err), file=sys.stderr)
        return 1
    except ArgSpecParseError as err:  # a malformed -p pipeline (a BaseException)
        print(f"{tool}: error: {str(err).rstrip()}", file=sys.stderr)
        return 1
    except DiagnosticException as err:
        print(str(err).rstrip(), file=sys.stderr)
        return 1
    except (OSError, ValueError) as err:
        located = ": error: " in str(err)  # already `file:line:col: error: ...`
        print(str(err) if located else f"{tool}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 -- last resort: no traceback for users
        print(
            f"{tool}: internal error: {type(err).__name__}: {err}\n"
            f"(please report this with the input that caused it)",
            file=sys.stderr,
        )
        return 2
    return status or 0
