"""``tcbench fleet submit|status|collect``: the command line of the fleet subpackage.

Exit codes: 0 success; 1 a task failed, was cancelled or left no files (collect); 2 usage or
input error (unknown partition, no sbatch, not a fleet folder, ...); 75 tasks still pending or
running (collect, ``status --wait`` past its timeout); 77 no task found a GPU (collect).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tcbench_tools.arguments import positive_seconds, whole_number
from tcbench_tools.fleet.state import MAX_TASKS

EPILOG = ("Exit codes: 0 ok; 1 a task failed, was cancelled or left no files; 2 usage or input "
          "error; 75 tasks still pending or running; 77 no task found a GPU. See docs/fleet.md.")
SUBMIT_EPILOG = ("Exit codes: 0 submitted; 2 usage or input error (an unknown partition, no "
                 "sbatch, an --out that already holds a fleet run). See docs/fleet.md.")
STATUS_EPILOG = ("Exit codes: 0 printed (with --wait: no task is pending or running); 2 not a "
                 "fleet folder; 75 --wait gave up with tasks still pending or running.")


def add_parser(sub) -> None:
    f = sub.add_parser("fleet", help="run the suite on a Slurm cluster's GPUs, gather one report",
                       description="Fan the suite out over a Slurm cluster: one job array per "
                                   "partition, one task per GPU; then follow the tasks and "
                                   "merge their results into one cross-GPU report.",
                       epilog=EPILOG)
    fs = f.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)

    s = fs.add_parser(
        "submit", help="write the batch script and submit one job array per partition",
        description="Each array task runs `tcbench run` from one bundle on the node Slurm picks, "
                    "with the GPU Slurm assigns, into OUT/<partition>/<node>-<gpu>/. Arguments "
                    "after '--' go to every benchmark binary (Google Benchmark flags). OUT must "
                    "be on a file system the compute nodes share.",
        epilog=SUBMIT_EPILOG)
    s.add_argument("--partition", required=True, metavar="P[,P...]",
                   help="partitions to measure, one job array each (one per GPU type)")
    s.add_argument("--gres", default="gpu:1",
                   help="GRES each task requests (default: gpu:1; 'none' for no request)")
    s.add_argument("--nodes-per-partition", type=whole_number(1, MAX_TASKS), default=1,
                   metavar="N",
                   help="array tasks per partition (default: 1)")
    s.add_argument("--quick", action="store_true", help="the quick suite (tcbench run --quick)")
    s.add_argument("--out", type=Path, default=Path("fleet"),
                   help="fleet folder on the shared file system (default: ./fleet)")
    s.add_argument("--bundle", type=Path, metavar="DIR",
                   help="an installed tcbench bundle (bin/, scripts/tcbench) on the shared file "
                        "system (default: this one when run from a bundle, else one built for "
                        "every architecture into SHARE/bundle)")
    s.add_argument("--share", type=Path, metavar="DIR",
                   help="shared folder for the bundle built here (default: --out)")
    s.add_argument("--bin-dir", type=Path, metavar="DIR",
                   help="run these bench_* binaries with this tcbench's tools (no bundle)")
    s.add_argument("--time", dest="time_limit", metavar="LIMIT",
                   help="Slurm time limit per task (sbatch --time), e.g. 30:00")
    s.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                   help="extra sbatch option, e.g. --sbatch-arg=--account=gpu (repeatable)")
    s.set_defaults(func=cmd_submit, passthrough=True)

    st = fs.add_parser("status", help="each task: pending, running, done, failed, no GPU",
                       description="Reads the tasks' own records and squeue/sacct (scontrol "
                                   "when the cluster keeps no accounting).",
                       epilog=STATUS_EPILOG)
    st.add_argument("dir", type=Path, metavar="DIR", help="the --out folder of submit")
    st.add_argument("--wait", action="store_true",
                    help="poll until no task is pending or running")
    st.add_argument("--timeout", type=positive_seconds, default=24 * 3600.0, metavar="S",
                    help="give up waiting after S seconds (exit 75; default: 1 day)")
    st.set_defaults(func=cmd_status)

    c = fs.add_parser("collect", help="merge every finished task into one cross-GPU report",
                      description="One report column per task that measured a GPU (tasks on "
                                  "the same model: one column each, labelled with node and "
                                  "GPU); lists failed, no-GPU and unfinished tasks.",
                      epilog=EPILOG)
    c.add_argument("dir", type=Path, metavar="DIR", help="the --out folder of submit")
    c.add_argument("--out", type=Path, default=None,
                   help="report folder (default: DIR/report)")
    c.add_argument("--history", metavar="URL",
                   help="also add every finished task's run to this history database "
                        "(as tcbench history add --db URL; see docs/history.md)")
    c.set_defaults(func=cmd_collect)


def cmd_submit(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools.fleet import submit

    return submit.submit(args.partition, args.gres, args.nodes_per_partition, args.quick,
                         args.out, args.bundle, args.bin_dir, args.share, args.time_limit,
                         args.sbatch_arg, extra)


def cmd_status(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools.fleet import collect

    return collect.status(args.dir, args.wait, args.timeout)


def cmd_collect(args: argparse.Namespace, extra: list[str]) -> int:
    from tcbench_tools.fleet import collect

    return collect.collect(args.dir, args.out, args.history)
