"""The five answers at the end of ``scripts/gpu_check.sh``: the check's run folder
(``OUT/results/``, read as every run folder is: results.load) as one GPU run, the bundle's
tcbench_studies for the host half, and ``OUT/answers.{md,html,json}``; the verdicts printed for
the check's log.

    python3 -m tcbench_tools.answers.gpu_check OUT BIN_DIR

A result file a failed binary left unreadable is named and left out, so the answers say "not
measured" for what it held instead of losing the other binaries' evidence; one it left cut short
is read as far as it got (results.load_file), and the rows that never ran are named at the end of
answers.md and answers.html. The host studies run once per output folder (a second call reuses
them). Exit 0 when the answers were written, 1 when they could not be (one sentence on stderr), 2
on usage.
Standard library only: the GPU box's Python may have nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tcbench_tools import results, studies
from tcbench_tools.answers import GPU, answer_all, render
from tcbench_tools.doc import Code, Doc
from tcbench_tools.errors import InputError

USAGE = "usage: python3 -m tcbench_tools.answers.gpu_check OUT BIN_DIR"


def never_ran_section(doc: Doc, run: results.ResultSet) -> None:
    """The answers' last section: the files cut short and the rows they never ran."""
    if not run.partial:
        return
    doc.heading(2, "Rows that never ran")
    doc.para("Some binaries were cut short, so these answers rest on what they finished: "
             f"{run.partial}.")
    # The names come from the binaries' listings: plain text, never markup of their own.
    doc.bullets([(Code(name),) for name in run.never_ran] or
                ["(the planned rows are not known)"])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    out, bin_dir = Path(argv[0]), Path(argv[1])
    try:
        try:
            run: results.ResultSet | None = results.load(out / "results")
        except InputError as exc:  # nothing measured (no GPU): the host half still answers
            print(f"answers: the GPU halves are not measured: {exc}", file=sys.stderr)
            run = None
        inputs = [run] if run is not None else []
        tool = studies.find_tool(out, [bin_dir], elsewhere=False)
        done = out / "studies" / "studies.json"
        if done.is_file():
            inputs.append(results.load(done))  # made by an earlier call for this folder
        elif tool is None:
            print(f"answers: no {studies.TOOL} in {bin_dir}: the answers have no host half.",
                  file=sys.stderr)
        else:
            # Not in results/: that folder is the GPU run, and a studies file there would be
            # read as one of its binaries.
            inputs.append(results.load(studies.run_studies(tool, out / "studies")))
        if not inputs:
            raise InputError(f"no readable result file in {out / 'results'} and no host "
                             "studies: nothing to answer from.")
        result = answer_all(inputs)
        doc = render.document(result, out)
        if run is not None:
            never_ran_section(doc, run)
        for name, text in (("answers.md", doc.markdown()),
                           ("answers.html", doc.html(render.TITLE)),
                           ("answers.json", render.as_json(result))):
            (out / name).write_text(text, encoding="utf-8")
    except (InputError, OSError) as exc:
        print(f"answers: not written: {exc}", file=sys.stderr)
        return 1
    print(render.console(result))
    if run is not None and run.partial:
        print(f"Partial: {len(run.never_ran)} planned row(s) never ran ({out / 'answers.md'} "
              "names them).")
    print(f"Details: {out / 'answers.md'}")
    # Last: the line the check's summary shows for this step.
    print("GPU verdicts: " + "; ".join(f"{a.id.upper()} {a.verdict}" for a in result
                                       if a.scope == GPU), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
