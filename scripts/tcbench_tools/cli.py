"""Command line of scripts/tcbench: ``test``, ``run``, ``compare``, ``report``, ``profile``,
``answers``, ``model``, ``fleet``, ``history``. Each subcommand's parser names its ``cmd_*``
function (``set_defaults(func=...)``).

Exit codes: 0 success; 1 a regression or another gate failure (compare), a failed benchmark,
binary or test step; 2 bad arguments or unusable input files (one sentence on stderr); 77 no CUDA
GPU (run); 130/143 run interrupted by SIGINT/SIGTERM; 70 a bug in the tools (one sentence, never a
traceback).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path

from tcbench_tools import __version__
from tcbench_tools.arguments import positive_int, positive_seconds, significance, threshold
from tcbench_tools.errors import (
    EXIT_FAIL,
    EXIT_INTERNAL,
    EXIT_NO_GPU,
    EXIT_OK,
    EXIT_USAGE,
    InputError,
)
from tcbench_tools.printable import printable

# Commands that pass the arguments after '--' on (to the benchmark binaries or the profiled one).
PASSTHROUGH = ("run", "fleet submit", "profile")


def _did_you_mean(word: str, known: list[str]) -> str:
    """" (did you mean 'run'?)" for the closest of ``known``, or "" when none is close."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class _Parser(argparse.ArgumentParser):
    """argparse quotes the arguments it refuses: a database URL among them is printed masked
    (docs/history.md), and control characters escaped. A mistyped command or choice gets the
    closest one (argparse's suggest_on_error, which Python 3.14 brings, by hand)."""

    def error(self, message: str):
        from tcbench_tools.history.dburl import mask_urls_in

        typo = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if typo:
            message += _did_you_mean(typo.group(1), re.findall(r"'([^']*)'", typo.group(2)))
        super().error(printable(mask_urls_in(message)))

    def unrecognized(self, extras: list[str]):
        """Refuse arguments this (sub-)parser does not take, with its own usage, and suggest the
        closest of its options for a mistyped one."""
        known = [o for a in self._actions for o in a.option_strings]
        hints = [_did_you_mean(x.split("=", 1)[0], known) for x in extras if x.startswith("-")]
        self.error(f"unrecognized arguments: {' '.join(extras)}"
                   + next((h for h in hints if h), ""))


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> _Parser:
    """The deepest sub-parser the arguments chose (``tcbench history add``'s, ...)."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            return parser
        parser = subs[0].choices[name]


def _shown(exc: BaseException, args: argparse.Namespace) -> str:
    """An error's text as printed: never a secret of the history database URL in use (--db,
    fleet collect --history, $TCBENCH_HISTORY_DB), whichever code path raised it."""
    from tcbench_tools.history import dburl

    text = str(exc)
    for given in (getattr(args, "db", None), getattr(args, "history", None),
                  os.environ.get("TCBENCH_HISTORY_DB")):
        if isinstance(given, str) and given:
            text = dburl.scrub(text.replace(given, dburl.masked(given)), dburl.secrets(given))
    return printable(dburl.mask_urls_in(text))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tcbench",
        description="Build, test, run and compare the tcbench Tensor Core benchmarks.",
        epilog="Exit codes: 0 ok; 1 regression or failure; 2 usage or input error; 77 no GPU; "
               "70 a bug in the tools (one sentence); 130/143 interrupted by SIGINT/SIGTERM.")
    parser.add_argument("--version", action="version", version=f"tcbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    t = sub.add_parser("test", help="configure, build, ctest and pytest with a CMake preset",
                       description="cmake --preset P, cmake --build --preset P, ctest --preset P, "
                                   "then pytest tests/scripts. Prints one verdict line.",
                       epilog="Exit codes: 0 every step passed; 1 a step failed (named); 2 usage "
                              "error (an unknown preset); 130/143 interrupted by SIGINT/SIGTERM.")
    t.add_argument("--preset", default="dev",
                   help="CMake configure/build/test preset of CMakePresets.json (default: dev)")
    t.add_argument("--jobs", "-j", type=positive_int, default=None,
                   help="parallel jobs of the build and of ctest, and pytest workers (at most 4) "
                        "(default: number of CPUs)")
    t.add_argument("--python-only", action="store_true",
                   help="run only the Python tests (pytest tests/scripts), no CMake")
    t.set_defaults(func=cmd_test)

    r = sub.add_parser(
        "run", help="build (release preset) and run every benchmark binary; without a GPU, the "
                   "host studies and their answers",
        description="Builds with the release preset, runs each build/<preset>/bin/bench_* in "
                    "turn, writes <out>/<binary>.json and a merged <out>/results.json, and prints "
                    "the best result per topic and precision. Arguments after '--' go to every "
                    "binary unchanged (Google Benchmark flags). Without a GPU (the driver is "
                    "asked before anything is built) it builds only the studies preset "
                    "(incrementally), runs the host studies, writes studies.json, answers.md and "
                    "answers.html, says how to get the GPU halves and exits 77; the options that "
                    "choose or time GPU benchmarks then do nothing, and it says so.",
        epilog="Exit codes: 0 all ran; 1 a binary or benchmark failed; 2 usage error (also when "
               "a binary rejects the flags after '--'); 77 no CUDA GPU is visible; 130/143 "
               "interrupted by SIGINT/SIGTERM (what finished is merged, marked incomplete).")
    r.add_argument("--quick", action="store_true",
                   help="a small fixed set of sizes, short minimum time (for CI)")
    r.add_argument("--filter", metavar="REGEX", help="Google Benchmark --benchmark_filter")
    r.add_argument("--repetitions", type=positive_int, metavar="N",
                   help="repetitions per benchmark (kept, with aggregates)")
    r.add_argument("--device", metavar="N",
                   help="GPU index or UUID (sets CUDA_VISIBLE_DEVICES; checked against "
                        "'nvidia-smi -L' when it is installed), or 'all': the quick suite on "
                        "each visible GPU, and a summary that flags any GPU more than 5%% below "
                        "the node's median (exit 1)")
    r.add_argument("--parallel", action="store_true",
                   help="with --device all: every GPU at once instead of one after another")
    r.add_argument("--clock-policy", choices=["as-is", "base", "max"], default=None,
                   help="SM clocks while measuring: as the driver sets them (default), locked "
                        "at the base (TDP) clock, or at the maximum; locking needs root, "
                        "otherwise the run stays as-is and says why")
    r.add_argument("--out", metavar="DIR", type=Path,
                   help="output folder (default: results/<YYYYmmdd-HHMMSS>/ in the repository)")
    r.add_argument("--preset", default="release", help="CMake preset to build (default: release)")
    r.add_argument("--build", action=argparse.BooleanOptionalAction, default=None,
                   help="configure and build first (default: yes, unless --bin-dir is given)")
    r.add_argument("--bin-dir", metavar="DIR", type=Path,
                   help="folder with the bench_* binaries (default: build/<preset>/bin)")
    r.add_argument("--bench", metavar="NAME", action="append",
                   help="run only this binary (bench_<topic> or <topic>); repeatable")
    r.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                   help="time limit per binary: one still running is stopped with its process "
                        "group, recorded as TIMEOUT and counted as lost, and the run goes on "
                        "(default: 900 s with --quick, 7200 s otherwise, times --repetitions)")
    r.set_defaults(func=cmd_run, passthrough=True)

    c = sub.add_parser(
        "compare", help="compare two runs; exit 1 on a regression",
        description="Matches benchmarks by name and decides per benchmark whether the candidate "
                    "regressed: slower than the threshold AND significant (a Mann-Whitney U test "
                    "with >= 5 repetitions on both sides; else beyond 2x the larger coefficient "
                    "of variation when a side has >= 2 repetitions; else, one sample each, "
                    "beyond the in-run noise band of the spread_pct counters; else the threshold "
                    "alone). BASELINE and CANDIDATE are result files or folders (a folder means "
                    "its results.json, or all its *.json).",
        epilog="Exit codes: 0 pass; 1 a regression, a newly failing, missing, newly skipped or "
               "not comparable benchmark (the last three unless allowed), an incomplete "
               "candidate run, or nothing compared; 2 usage or input error (including values "
               "that are not finite numbers). docs/ci.md has the full table. Two host-study "
               "files (studies.json of a run without a GPU) are compared by their values, not "
               "their CPU time: exit 0 when every value is the same, 1 when one changed; a "
               "host-study file against a GPU run is refused (exit 2).")
    c.add_argument("baseline", metavar="BASELINE")
    c.add_argument("candidate", metavar="CANDIDATE")
    c.add_argument("--threshold", type=threshold, default=None, metavar="PCT",
                   help="slowdown in percent that counts as a regression (default: 5, or the "
                        "config's default); per-benchmark thresholds in the config still apply")
    c.add_argument("--alpha", type=significance, default=None,
                   help="significance level of the U test (default: 0.05)")
    c.add_argument("--config", metavar="FILE",
                   help="JSON or TOML: default, alpha, allow_missing, allow_skipped, "
                        "allow_not_comparable, thresholds = {REGEX: PCT}")
    c.add_argument("--normalize-peak", action="store_true",
                   help="compare pct_of_peak (higher is better) instead of time: across GPUs")
    c.add_argument("--allow-missing", action="store_true",
                   help="benchmarks of the baseline absent from the candidate do not fail")
    c.add_argument("--allow-skipped", action="store_true",
                   help="benchmarks that ran in the baseline and are skipped now do not fail")
    c.add_argument("--allow-not-comparable", action="store_true",
                   help="benchmarks without a comparable metric do not fail")
    c.add_argument("--allow-throttled", action="store_true",
                   help="candidate benchmarks that ran throttled (hw_slowdown, thermal) or at an "
                        "SM clock more than 5%% below the baseline's are compared anyway")
    c.add_argument("--markdown", metavar="FILE", type=Path,
                   help="also write the table as Markdown; appended when FILE is "
                        "$GITHUB_STEP_SUMMARY, replaced otherwise")
    c.set_defaults(func=cmd_compare)

    f = sub.add_parser(
        "profile", help="tensor-pipe counters of a benchmark binary, read by Nsight Compute",
        description="Runs BINARY under ncu with the metric list the benchmarks collect "
                    "in-process (tcbench_metrics), --csv and --clock-control none, and prints "
                    "the per-kernel means with the same counter names. Arguments after '--' go "
                    "to the binary (e.g. --benchmark_filter).",
        epilog="Exit codes: 0 printed; 1 ncu or the binary failed; 2 usage error; 3 ncu is not "
               "installed; 77 no CUDA GPU.")
    f.add_argument("binary", metavar="BINARY", type=Path)
    f.add_argument("--ncu", metavar="PATH", help="the ncu executable (default: PATH, "
                   "/usr/local/cuda/bin, /opt/nvidia/nsight-compute/*)")
    f.add_argument("--chip", metavar="NAME", help="metric list of this chip instead of the GPU's")
    f.add_argument("--launch-count", type=positive_int, metavar="N",
                   help="profile at most N kernel launches (ncu --launch-count)")
    f.add_argument("--kernel-regex", metavar="REGEX",
                   help="profile only kernels whose name matches (ncu --kernel-name regex:)")
    f.add_argument("--nvtx-range", metavar="NAME",
                   help="profile only the kernels inside NVTX range NAME (bench_tensor_util: "
                        "tcbench_step, one whole training step) and add a row for all of them "
                        "as one range")
    f.set_defaults(func=cmd_profile, passthrough=True)

    p = sub.add_parser(
        "report", help="cross-GPU report: Markdown, HTML and PNG plots",
        description="One result file per GPU -> report.md (+ PNGs) and a self-contained "
                    "report.html in --out. A FILE may also be a run folder (its results.json and "
                    "studies.json), a folder of runs such as results/ (the newest run, named), or "
                    "the gpu-check.tgz that scripts/gpu_check.sh --archive sends back.",
        epilog="Exit codes: 0 written; 2 usage or input error (one sentence); 70 a bug in the "
               "tools.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--out", type=Path, default=Path("report"),
                   help="output folder (default: report/)")
    p.add_argument("--label", action="append", metavar="NAME",
                   help="name of each FILE in the tables and plots, in order (repeat once per "
                        "FILE; default: the GPU name, made unique with the folder or date)")
    p.set_defaults(func=cmd_report)

    q = sub.add_parser(
        "answers", help="the five questions: what was measured, a verdict, the caveats",
        description="For each of the five claims tcbench tests (INT8, loss scaling, tensor-pipe "
                    "utilization, alignment, FP8), what the results measured, a verdict from a "
                    "written rule (holds, holds with a caveat, does not hold here, not measured) "
                    "and the caveats; docs/concepts/answers.md has the rules. RESULTS are result "
                    "files, run folders (results.json and studies.json), folders of runs (the "
                    "newest, named) or the gpu-check.tgz of scripts/gpu_check.sh --archive; "
                    "default: the newest run in results/.",
        epilog="Exit codes: 0 answered (whatever the verdicts); 2 usage or input error.")
    q.add_argument("files", nargs="*", metavar="RESULTS", type=Path)
    q.add_argument("--json", action="store_true",
                   help="print the answers as JSON ({\"questions\": [...]}) instead of text")
    q.add_argument("--out", type=Path, metavar="DIR",
                   help="also write answers.md, answers.html and answers.json into DIR")
    q.set_defaults(func=cmd_answers)

    from tcbench_tools import model_cli

    model_cli.add_parser(sub)
    from tcbench_tools.fleet import cli as fleet_cli

    fleet_cli.add_parser(sub)
    from tcbench_tools import history

    history.add_parser(sub)
    return parser


def cmd_test(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools.build import run_tests

    return run_tests(args.preset, args.jobs, args.python_only)


# The run options that choose or time GPU benchmarks, as the user spells them: without a GPU
# they do nothing, and the run says so (--bench fp8 --quick used to be ignored in silence).
GPU_ONLY = (("quick", "--quick"), ("bench", "--bench"), ("filter", "--filter"),
            ("repetitions", "--repetitions"), ("device", "--device"), ("parallel", "--parallel"),
            ("clock_policy", "--clock-policy"), ("timeout", "--timeout"))


def gpu_only_flags(args: argparse.Namespace, extra: list[str]) -> list[str]:
    given = []
    for key, flag in GPU_ONLY:
        value = getattr(args, key, None)
        if value in (None, False, []):
            continue
        if value is True:
            given.append(flag)
        elif isinstance(value, list):
            given.append(f"{flag} {' '.join(map(str, value))}")
        else:
            given.append(f"{flag} {value}")
    if args.preset != "release":
        given.append(f"--preset {args.preset}")
    if extra:
        given.append(f"the arguments after '--' ({' '.join(extra)})")
    return given


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools import build, gpu_probe, next_steps, runner, studies

    repo = build.repo_root()
    # An installed bundle (cmake --install / CPack) has bin/ and no sources: run what it ships.
    if args.bin_dir is None and not (repo / "CMakeLists.txt").exists() and (repo / "bin").is_dir():
        args.bin_dir = repo / "bin"
    should_build = args.build if args.build is not None else args.bin_dir is None
    out = args.out or repo / "results" / datetime.now().strftime("%Y%m%d-%H%M%S")
    # Ask the driver before building anything: without a usable GPU there is nothing to build the
    # benchmarks for, and the answer takes a fraction of a second instead of a full build.
    probe = gpu_probe.probe()
    if probe.state == gpu_probe.UNUSABLE:
        print(f"tcbench: the GPU cannot be used: {probe.sentence}; nothing was run.",
              file=sys.stderr)
        return EXIT_FAIL
    if probe.state == gpu_probe.NO_GPU:
        print(f"tcbench run: no GPU ({probe.sentence}): running the host studies only; the GPU "
              "halves of the five questions stay 'not measured'.", flush=True)
        idle = gpu_only_flags(args, extra)
        if idle:
            print(f"tcbench run: without a GPU {' and '.join(idle)} do nothing: they choose and "
                  "time GPU benchmarks; the host studies run whole.", flush=True)
        build_now = should_build and studies.is_source_tree(repo)
        if build_now:
            build.check_preset(studies.PRESET, repo)
        studies.host_only(repo, out, build_now, [args.bin_dir] if args.bin_dir else [])
        print(f"tcbench: no CUDA GPU is visible ({probe.sentence}): nothing was measured on a "
              f"GPU; the host studies are in {out}.", file=sys.stderr, flush=True)
        print("\n".join(next_steps.lines(repo)), flush=True)  # the last lines: what to do next
        return EXIT_NO_GPU
    if should_build and (code := runner.build(args.preset, repo)) != EXIT_OK:
        return code
    if args.parallel and args.device != "all":
        raise InputError("--parallel runs the GPUs of --device all at once; give --device all.")
    if args.device is not None and args.device != "all":
        runner.check_device(args.device)
    bin_dir = args.bin_dir or repo / "build" / args.preset / "bin"
    binaries = runner.discover(bin_dir)
    if args.bench:
        wanted = {b if b.startswith("bench_") else f"bench_{b}" for b in args.bench}
        unknown = wanted - {b.name for b in binaries}
        if unknown:
            raise InputError(f"no binary named {', '.join(sorted(unknown))} in {bin_dir} "
                             f"(there are: {', '.join(b.name for b in binaries)}).")
        binaries = [b for b in binaries if b.name in wanted]
    opts = runner.RunOptions(out_dir=out, quick=args.quick, filter=args.filter,
                             repetitions=args.repetitions, device=args.device, extra_args=extra,
                             clock_policy=args.clock_policy, timeout=args.timeout)
    if args.device == "all":
        from tcbench_tools import node

        return node.run_node(binaries, opts, bin_dir, parallel=args.parallel)
    count = f"{len(binaries)} binar{'y' if len(binaries) == 1 else 'ies'}"
    print(f"tcbench run: {count} from {bin_dir}, results to {out}", flush=True)
    code = runner.run_suite(binaries, opts)
    if code in (EXIT_OK, EXIT_FAIL):  # the measurements are in: add the host half and answers
        studies.after_gpu_run(repo, out, [bin_dir])
    return code


def _is_step_summary(path: Path) -> bool:
    """Whether ``path`` is the file GitHub Actions names in $GITHUB_STEP_SUMMARY (appended to,
    never replaced: other steps write there too)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary:
        return False
    try:
        return Path(summary).resolve() == path.resolve()
    except (OSError, RuntimeError):
        return False


def _compare_studies(args: argparse.Namespace, baseline, candidate) -> int:
    """compare of two host-study files (study_compare.py); a study file against a GPU run is
    refused in one sentence."""
    from tcbench_tools import study_compare

    study_compare.refuse_mixed(baseline, candidate)
    comp = study_compare.compare(baseline, candidate)
    print(study_compare.render_text(comp))
    if args.markdown:
        try:
            with open(args.markdown, "a" if _is_step_summary(args.markdown) else "w",
                      encoding="utf-8") as fh:
                fh.write(study_compare.render_markdown(comp, args.baseline, args.candidate))
        except OSError as exc:
            raise InputError(f"cannot write the Markdown summary {args.markdown}: "
                             f"{exc.strerror or exc}.") from None
    return comp.exit_code


def cmd_compare(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools import compare
    from tcbench_tools.answers.evidence import is_host
    from tcbench_tools.results import load

    options = compare.Options()
    if args.config:
        compare.load_config(args.config, options)
    if args.threshold is not None:
        options.threshold = args.threshold
    if args.alpha is not None:
        options.alpha = args.alpha
    options.normalize_peak = args.normalize_peak
    for key in compare.OPT_OUTS.values():
        if getattr(args, key):
            setattr(options, key, True)
    baseline, candidate = load(args.baseline), load(args.candidate)
    if is_host(baseline) or is_host(candidate):  # deterministic studies: values, never CPU time
        return _compare_studies(args, baseline, candidate)
    comp = compare.compare(baseline, candidate, options)
    for warning in comp.warnings:
        print(printable(f"tcbench compare: warning: {warning}"), file=sys.stderr)
    print(compare.render_text(comp))
    code = comp.exit_code
    if args.markdown:
        try:
            with open(args.markdown, "a" if _is_step_summary(args.markdown) else "w",
                      encoding="utf-8") as fh:
                fh.write(compare.render_markdown(comp, args.baseline, args.candidate))
        except OSError as exc:
            # The verdict stands (a regression stays 1); a pass whose summary is lost is exit 2.
            why = f"cannot write the Markdown summary {args.markdown}: {exc.strerror or exc}"
            if code == EXIT_OK:
                why += "; the comparison passed, but its summary is lost"
                code = EXIT_USAGE
            else:
                why += f"; the verdict stands: {comp.verdict} (exit {code})"
            print(printable(f"tcbench: {why}."), file=sys.stderr)
    if comp.invalid:
        first = comp.invalid[0]
        print(printable(f"tcbench: {len(comp.invalid)} benchmark(s) hold values no measurement "
                        "gives (not finite numbers, or outside their physical range), which no "
                        f"statistic may use (first: {first.name}, {first.note}); fix or "
                        "regenerate the result files."), file=sys.stderr)
    return code


def cmd_profile(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools import profile

    regex = profile.kernel_regex_arg(args.kernel_regex) if args.kernel_regex else None
    nvtx = profile.nvtx_range_arg(args.nvtx_range) if args.nvtx_range is not None else None
    return profile.run_profile(args.binary, extra, args.ncu, args.chip, args.launch_count, regex,
                               nvtx)


class _Progress:
    """The part a long command is drawing, on one line of a terminal's stderr, rewritten in
    place and cleared at the end; nothing when stderr is a file or a pipe (a CI log)."""

    def __init__(self, command: str):
        self.command, self.start = command, time.monotonic()
        self.live = sys.stderr.isatty()

    def __call__(self, done: int, parts: int, name: str) -> None:
        if self.live:
            line = printable(f"tcbench {self.command}: drawing {done + 1}/{parts}: {name} "
                             f"({time.monotonic() - self.start:.0f} s) ...")
            print(f"\r\033[K{line}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.live:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def cmd_report(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools import inputs, report
    from tcbench_tools.answers.evidence import is_host

    if args.label is not None and len(args.label) != len(args.files):
        raise InputError(f"--label was given {len(args.label)} time(s) for {len(args.files)} "
                         "file(s): give one label per file, in the same order.")
    sets, labels = [], []
    for i, name in enumerate(args.files):
        # A run folder or a GPU check's archive is a GPU run and its host studies.
        got = inputs.load(Path(name), "report")
        sets += got
        if args.label is not None:
            labels += [args.label[i], *(f"{args.label[i]} ({j})" for j in range(1, len(got)))]
    progress = _Progress("report")
    try:
        md, page, images = report.write(sets, args.out, labels or None, progress=progress)
    finally:
        progress.close()
    gpus = sum(not is_host(rs) for rs in sets)
    host = " and the host studies" if len(sets) > gpus else ""
    print(f"tcbench report: {_plural(gpus, 'GPU run')}{host} -> {md}, {page} and "
          f"{_plural(len(images), 'plot')} in {args.out} "
          f"({time.monotonic() - progress.start:.1f} s).")
    return EXIT_OK


def cmd_answers(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools import answers, build, inputs
    from tcbench_tools.answers import render

    files = args.files
    if not files:  # the newest run tcbench run wrote
        found = inputs.newest_run(build.repo_root() / "results")
        if found is None:
            raise InputError(f"no run folder in {build.repo_root() / 'results'}: give result "
                             "files, or run `scripts/tcbench run` first.")
        files = [found[0]]
    result = answers.answer_all(inputs.load_all(files, "answers"))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "answers.md").write_text(render.markdown(result, args.out), encoding="utf-8")
        (args.out / "answers.html").write_text(render.page_html(result, args.out),
                                               encoding="utf-8")
        (args.out / "answers.json").write_text(render.as_json(result), encoding="utf-8")
    print(render.as_json(result) if args.json else render.console(result), end="" if args.json
          else "\n")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _chosen(parser, args).unrecognized(unknown)
    if extra and not getattr(args, "passthrough", False):
        listed = ", ".join(f"'{c}'" for c in PASSTHROUGH[:-1]) + f" and '{PASSTHROUGH[-1]}'"
        print(f"tcbench: arguments after '--' are only for {listed}.", file=sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args, extra)
    except InputError as exc:
        print(f"tcbench: {_shown(exc, args)}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as exc:  # TCBENCH_PYTHON_ENV=system with a bare interpreter
        print(f"tcbench: '{args.command}' needs the Python package {exc.name}, which "
              f"{sys.executable} lacks (install it, or unset TCBENCH_PYTHON_ENV to use .venv).",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tcbench: interrupted.", file=sys.stderr)
        return 130
    except runner_interrupted() as exc:
        print(f"tcbench: interrupted by {exc}.", file=sys.stderr)
        return 128 + exc.signum
    except OSError as exc:  # the file system refused something no check above foresaw
        where = f" {exc.filename}" if exc.filename else ""
        print(printable(f"tcbench: cannot access{where}: {exc.strerror or exc}."),
              file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        print("tcbench: an input is nested too deeply to read.", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - never a traceback; 1 and 2 keep their meaning
        print(f"tcbench: internal error ({type(exc).__name__}: {_shown(exc, args)[:500]}); "
              "please report it with the command line and input files.", file=sys.stderr)
        return EXIT_INTERNAL


def runner_interrupted() -> type[Exception]:
    from tcbench_tools.process import Interrupted

    return Interrupted
