"""The one exception the tools raise for bad input; the CLI turns it into one line and exit 2."""

EXIT_OK = 0
EXIT_FAIL = 1  # a regression or gate failure (compare), a failed benchmark or step (run, test)
EXIT_USAGE = 2  # bad arguments or unusable input files
EXIT_INTERNAL = 70  # a bug in the tools (sysexits EX_SOFTWARE): never 1 or 2, never a traceback
EXIT_NO_GPU = 77  # the benchmark binaries' "no CUDA device" code (CTest SKIP_RETURN_CODE)


class InputError(Exception):
    """A user-facing problem with arguments or input files, stated in one sentence."""

# How tcbench run records a binary it stopped because it ran past --timeout, in
# tcbench_failed_binaries ("bench_x:timeout"), beside exit codes and -N for "killed by signal N".
TIMEOUT_CODE = "timeout"


def exit_text(code: object) -> str:
    """A recorded exit of a binary in words: "exit 1", "killed by signal 9 (SIGKILL)", "stopped
    at its time limit (--timeout)"."""
    import re
    import signal

    text = str(code)
    if text == TIMEOUT_CODE:
        return "stopped at its time limit (--timeout)"
    if not re.fullmatch(r"-?[0-9]{1,9}", text, re.ASCII):  # int() would read "٣" as 3
        return f"exit {text}"
    value = int(text)
    if value < 0:
        try:
            name = signal.Signals(-value).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {-value} ({name})"
    return f"exit {value}"
