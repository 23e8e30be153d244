"""The GPU-run check (docs/gpu-check.md): one command on a GPU box that runs, in tiers, the rows
that answer the five questions, then the device tests, then the rest of the quick suite, each step
in its own process group under a time limit and a budget planned by a cost model, and brings back
everything in four files (box.txt first). Standard library only: the box's Python has nothing else.

    cli.py       the command line (scripts/gpu_check.sh is its launcher)
    plan.py      the steps, their tiers and benchmark filters, the listings
    cost.py      the cost model behind every predicted second
    run.py       running the steps (process.py), the budget, the verdict
    summary.py   summary.txt and its tables
    archive.py   --archive: the output folder as one .tar.gz after every step
    gpu_state.py nvidia-smi queries (never a setting)
    box.py       box.txt: the box as the check found it, written before anything else
    bundle.py    --bundle, and the checks a box makes of one
"""
