"""What answers and report take as input besides result files (inputs.py): the gpu-check.tgz a
borrowed GPU box sends back, read directly and safely; a folder of runs (results/), read as its
newest run and named; and report's progress line while it draws (issue 43 §2)."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time

import pytest

import answers_data as ad
from conftest import fixture, load_doc, write
from tcbench_tools import inputs
from tcbench_tools.gpu_check import archive
from tcbench_tools.sections._glance import SHORT

HOST = ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host())


def check_folder(tmp_path):
    """A GPU check's output folder as gpu_check.sh leaves it: one result file per binary and
    tier under results/, the host studies under studies/, logs, answers."""
    out = tmp_path / "gc"
    for sub in ("results", "studies", "logs"):
        (out / sub).mkdir(parents=True)
    write(out / "results", "bench_loss_scaling.t1.json", load_doc("loss_scaling.json"))
    write(out / "results", "bench_int8_gemm.t3.json", load_doc("int8_gemm_a.json"))
    write(out / "studies", "studies.json", HOST)
    (out / "logs" / "bench_loss_scaling.t1.log").write_text("ok\n")
    (out / "summary.txt").write_text("-- PASSED\n")
    return out


def test_answers_and_report_read_the_archive_a_gpu_box_sends_back(cli, tmp_path):
    """Before: "gpu-check.tgz is not JSON (it is not UTF-8 text)", exit 2."""
    out = check_folder(tmp_path)
    tgz = tmp_path / "back" / "gpu-check.tgz"
    archive.write(out, tgz)
    code, from_archive, err = cli("answers", tgz, "--json")
    assert code == 0, err
    code, from_folder, err = cli("answers", out / "results" / "bench_loss_scaling.t1.json",
                                 out / "results" / "bench_int8_gemm.t3.json",
                                 out / "studies" / "studies.json", "--json")
    assert code == 0, err
    got = json.loads(from_archive)["questions"]
    # The archive is one GPU run (its result files merged) plus the host half.
    gpu = {a["id"]: a["verdict"] for a in got if a["scope"] == "gpu"}
    assert len(gpu) == 5 and gpu["q1"] != "not measured" and gpu["q2"] != "not measured"
    host = [(a["id"], a["verdict"]) for a in got if a["scope"] == "host"]
    assert host == [(a["id"], a["verdict"]) for a in json.loads(from_folder)["questions"]
                    if a["scope"] == "host"]
    assert all(str(tmp_path / "gc") not in json.dumps(a) for a in got)

    code, stdout, err = cli("report", tgz, "--out", tmp_path / "rep")
    assert code == 0, err
    assert stdout.startswith("tcbench report: 1 GPU run and the host studies -> ")
    md = (tmp_path / "rep" / "report.md").read_text()
    glance = md.split("## At a glance\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [r.split(" | ")[0] for r in glance[2:]] == ["| without a GPU", "| Fixture GPU A"]
    assert [c.strip() for c in glance[3].split("|")[2:7]] == [SHORT[gpu[f"q{i}"]]
                                                               for i in range(1, 6)]


def _tar(path, members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)


def _info(name: str, kind=tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def test_a_hostile_archive_writes_nothing_outside_and_reads_only_result_files(cli, tmp_path):
    good = json.dumps(load_doc("loss_scaling.json")).encode()
    evil = tmp_path / "evil.tgz"
    victim = tmp_path / "victim"
    victim.mkdir()
    _tar(evil, [
        (_info("gc/results/../../victim/x.json"), good),  # a path that climbs out
        (_info("/abs/results/y.json"), good),  # an absolute path
        (_info("gc/results/link.json", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (_info("gc/results/hard.json", tarfile.LNKTYPE, "gc/logs/a"), b""),
        (_info("gc/results/fifo.json", tarfile.FIFOTYPE), b""),
        (_info("gc/results/.hidden.json"), good),
        (_info("gc/results/bench_ok.json"), good),
    ])
    code, out, err = cli("answers", evil, "--json")
    assert code == 0, err
    gpu = [a for a in json.loads(out)["questions"] if a["scope"] == "gpu"]
    assert [a["label"] for a in gpu][:1] == ["Fixture GPU A"]  # only bench_ok.json was read
    assert not any(victim.iterdir()) and not (tmp_path / "abs").exists()


@pytest.mark.parametrize("case", ["not gzip", "not tar", "no results", "bomb", "huge member"])
def test_a_bad_archive_is_one_sentence_and_exit_2(cli, tmp_path, monkeypatch, case):
    tgz = tmp_path / "gpu-check.tgz"
    good = json.dumps(load_doc("loss_scaling.json")).encode()
    if case == "not gzip":
        tgz.write_bytes(b"PK\x03\x04 a zip file")
    elif case == "not tar":
        import gzip

        tgz.write_bytes(gzip.compress(b"just text, not a tar archive" * 100))
    elif case == "no results":
        _tar(tgz, [(_info("gc/logs/a.log"), b"x")])
    elif case == "bomb":
        monkeypatch.setattr(inputs, "ARCHIVE_EXPANDED", 1 << 16)
        _tar(tgz, [(_info("gc/logs/big.log"), bytes(1 << 20)), (_info("gc/results/b.json"), good)])
    else:
        monkeypatch.setattr(inputs.files, "RESULTS_LIMIT", 1024)
        _tar(tgz, [(_info("gc/results/b.json"), good)])
    code, out, err = cli("answers", tgz)
    assert code == 2 and out == ""
    assert err.startswith(f"tcbench: {tgz}") and err.count("\n") == 1, err
    assert "Traceback" not in err
    why = {"not gzip": "is not a readable .tgz archive (", "not tar": "is not a readable .tgz",
           "no results": "holds no results/*.json and no studies/studies.json: it is not the",
           "bomb": "expands to more than 65536 bytes", "huge member": ": gc/results/b.json is "}
    assert why[case] in err


def test_a_folder_of_runs_reads_its_newest_and_says_which(cli, tmp_path):
    """Before: "results is a folder with no results.json and no *.json files", exit 2."""
    root = tmp_path / "results"
    for i, name in enumerate(("20260101-000000", "20260301-000000", "zz-older-by-time")):
        (root / name).mkdir(parents=True)
        path = write(root / name, "studies.json", HOST)
        stamp = time.time() - 1000 + (i if name[0] == "2" else -500)
        os.utime(path, (stamp, stamp))
    code, stdout, err = cli("report", root, "--out", tmp_path / "rep")
    assert code == 0, err
    assert err == (f"tcbench report: {root} holds 3 runs: reading the newest, "
                   f"{root / '20260301-000000'} (name a run folder to read another).\n")
    assert stdout.startswith("tcbench report: 0 GPU runs and the host studies -> ")
    code, _, err = cli("answers", root)
    assert code == 0 and "reading the newest, " in err


def test_report_shows_its_progress_on_a_terminal(cli, tmp_path, monkeypatch):
    """Before: nothing for 14-16 s, then one line."""
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, stdout, err = cli("report", fixture("gpu_a.json"), "--out", tmp_path / "rep")
    assert code == 0, err
    shown = [p for p in err.split("\r\033[K") if p]
    assert shown[0].startswith("tcbench report: drawing 1/") and ": peak vs achieved (" in shown[0]
    last = shown[-1]
    assert ": per-GPU detail (" in last and last.split("drawing ")[1].split(":")[0] == (
        "{0}/{0}".format(last.split("/")[1].split(":")[0]))
    assert err.endswith("\r\033[K")  # the line is cleared before the result line is printed
    assert stdout.startswith("tcbench report: 1 GPU run -> ") and " plots in " in stdout
