"""The one exception the tools raise for bad input; the CLI turns it into one line and exit 2."""

EXIT_OK = 0
EXIT_FAIL = 1  # a regression or gate failure (compare), a failed benchmark or step (run, test)
EXIT_USAGE = 2  # bad arguments or unusable input files
EXIT_INTERNAL = 70  # a bug in the tools (sysexits EX_SOFTWARE): never 1 or 2, never a traceback
EXIT_NO_GPU = 77  # the benchmark binaries' "no CUDA device" code (CTest SKIP_RETURN_CODE)


class InputError(Exception):
    """A user-facing problem with arguments or input files, stated in one sentence."""
