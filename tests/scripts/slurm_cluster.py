"""A real single-node Slurm cluster in a temporary folder, for the fleet tests.

munged, slurmctld and slurmd (Debian's slurm-wlm and munge packages) run as root with every path
under the folder: their own munge socket and key, state, spool, logs, and two free TCP ports, so
that several test runs on one machine do not meet. The one node is ``localhost`` with 2 CPUs and
two GPUs as GRES; the "GPUs" are character-device files (mknod 1:3, /dev/null's numbers), so
Slurm assigns them and sets CUDA_VISIBLE_DEVICES exactly as on a GPU node, while the programs the
jobs run find no CUDA driver. No cgroups and no systemd: ProctrackType=proctrack/linuxproc,
TaskPlugin=task/none, no accounting database (sacct says accounting is disabled, and the fleet
tools fall back to scontrol, which keeps finished jobs for MinJobAge).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sinfo", "scontrol", "scancel")
START_TIMEOUT = 30.0  # seconds for the node to register as idle
NODE = "localhost"


class SlurmUnavailable(Exception):
    """The daemons cannot run here; the message says why (the tests skip with it)."""


def _free_ports(count: int) -> list[int]:
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return f"({path.name}: no log)"
    return " | ".join(text[-lines:]) or f"({path.name}: empty)"


class SlurmCluster:
    def __init__(self, root: Path, partitions: list[str]):
        self.root = root
        self.partitions = partitions
        self.conf = root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.pids: dict[str, int] = {}

    # -- setup ----------------------------------------------------------------------------------

    def _check_tools(self) -> None:
        missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
        if missing:
            raise SlurmUnavailable(f"Slurm is not installed here (no {', '.join(missing)}): "
                                   "apt-get install slurm-wlm munge")
        if os.geteuid() != 0:
            raise SlurmUnavailable("the Slurm daemons need root here (slurmd starts jobs as "
                                   "their user)")

    def _write_config(self) -> None:
        r = self.root
        for sub in ("munge", "state", "spool", "log", "dev"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        (r / "munge").chmod(0o700)
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        for i in range(2):
            dev = r / "dev" / f"nvidia{i}"
            try:
                os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # S_IFCHR
            except OSError as exc:
                raise SlurmUnavailable(f"cannot create the stand-in GPU device {dev}: "
                                       f"{exc.strerror}") from None
        ctld_port, node_port = _free_ports(2)
        parts = "\n".join(f"PartitionName={p} Nodes={NODE} MaxTime=INFINITE State=UP"
                          + (" Default=YES" if i == 0 else "")
                          for i, p in enumerate(self.partitions))
        self.conf.write_text(f"""\
ClusterName=tcbtest
SlurmctldHost={NODE}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={node_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r}/munge/munge.socket
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MinJobAge=600
KillWait=2
GresTypes=gpu
NodeName={NODE} NodeHostname={NODE} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
{parts}
""")  # noqa: E501 - slurm.conf lines are as long as they need
        (self.root / "gres.conf").write_text(
            f"NodeName={NODE} Name=gpu File={r}/dev/nvidia[0-1]\n")

    def _run(self, args: list[str], what: str) -> None:
        try:
            proc = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SlurmUnavailable(f"{what} did not start: {exc}") from None
        if proc.returncode != 0:
            raise SlurmUnavailable(f"{what} exited {proc.returncode}: "
                                   f"{(proc.stderr or proc.stdout).strip()[-300:]}")

    def _pid(self, name: str, path: Path) -> None:
        for _ in range(50):
            try:
                self.pids[name] = int(path.read_text().split()[0])
                return
            except (OSError, ValueError, IndexError):
                time.sleep(0.1)

    def start(self) -> None:
        self._check_tools()
        self._write_config()
        r = self.root
        self._run(["munged", "--force", f"--socket={r}/munge/munge.socket",
                   f"--key-file={r}/munge/munge.key", f"--log-file={r}/munge/munged.log",
                   f"--pid-file={r}/munge/munged.pid", f"--seed-file={r}/munge/munged.seed"],
                  "munged")
        self._pid("munged", r / "munge" / "munged.pid")
        self._run(["slurmctld", "-f", str(self.conf)], "slurmctld")
        self._pid("slurmctld", r / "slurmctld.pid")
        self._run(["slurmd", "-f", str(self.conf), "-N", NODE], "slurmd")
        self._pid("slurmd", r / "slurmd.pid")
        deadline = time.monotonic() + START_TIMEOUT
        state = ""
        while time.monotonic() < deadline:
            proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env,
                                  capture_output=True, text=True, timeout=30)
            state = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else proc.stderr
            if state.strip() == "idle":
                return
            time.sleep(0.3)
        raise SlurmUnavailable(f"the node did not become idle in {START_TIMEOUT:g} s (sinfo: "
                               f"{state.strip()[:200]}); slurmctld: "
                               f"{_tail(r / 'log' / 'slurmctld.log')}; slurmd: "
                               f"{_tail(r / 'log' / 'slurmd.log')}")

    # -- use ------------------------------------------------------------------------------------

    def command(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True,
                              timeout=60)

    # -- teardown -------------------------------------------------------------------------------

    def _alive(self, pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        try:  # a zombie child of ours would look alive
            return os.waitpid(pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return True

    def stop(self) -> None:
        slurm = {k: v for k, v in self.pids.items() if k != "munged"}
        if slurm:
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env,
                           capture_output=True, timeout=30)
            subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True,
                           timeout=30)
        # scontrol shutdown ends slurmctld and slurmd; munged and stragglers get SIGTERM, then
        # SIGKILL: only the processes this fixture started, by their pid.
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.get(name)
            if pid is None:
                continue
            for sig, grace in ((None, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
                if sig is not None and self._alive(pid):
                    os.kill(pid, sig)
                deadline = time.monotonic() + (0.0 if name == "munged" and sig is None else grace)
                while self._alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                if not self._alive(pid):
                    break
