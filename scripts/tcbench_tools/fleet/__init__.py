"""``tcbench fleet``: the suite fanned out over a Slurm cluster's GPUs, gathered into one report.

- ``cli``: the ``fleet submit|status|collect`` command line;
- ``submit``: the batch script and one job array per partition;
- ``collect``: the tasks' states, and the cross-GPU report of every finished task;
- ``state``: where each task stands (its own records first, then Slurm);
- ``slurm``: the Slurm client commands and what their output means.
"""
