"""The answers rules ask for benchmarks by the parts of their names (ResultSet.find) and by names
built as the C++ builds them (BenchName, ResultSet.get), never by a name or pattern written by
hand: so a name key the C++ renames makes the rules fail, instead of answering "not measured";
and every question a rule asks matches a benchmark the binaries list (or the host studies
write), so a renamed topic, variant or shape fails here too."""

from __future__ import annotations

import ast
import json
import re
import subprocess

import pytest

import answers_data as ad
from conftest import REPO, built_bin_dir, topics
from tcbench_tools import names, schema
from tcbench_tools.answers import NOT_MEASURED, answer_all, rules
from tcbench_tools.results import ResultSet, parse_doc

RULES = REPO / "scripts" / "tcbench_tools" / "answers" / "rules.py"


def every_input() -> list[ResultSet]:
    """Host studies and one GPU run that reach every branch of every rule that reads a key."""
    host = ad.int8_study() + ad.loss_host() + ad.alignment_model() + ad.fp8_study()
    gpu = (ad.int8_gpu() + ad.loss_gpu() + ad.tensor_util(small=(30.0, 5.0)) + ad.train_steps()
           + ad.alignment_gpu(cublas=(100.0, 90.0), heads=(50.0, 40.0)) + ad.fp8_gpu())
    return [parse_doc(ad.doc(ad.HOST_CONTEXT, host)), parse_doc(ad.doc(ad.GPU_CONTEXT, gpu))]


def test_every_half_is_measured_on_the_inputs():
    assert [a.id for a in answer_all(every_input()) if a.verdict == NOT_MEASURED] == []


# The keys the rules ask for: each, renamed, must stop the rules rather than be "not measured".
KEYS_ASKED = ("m", "n", "k", "layout", "batch", "tokens", "hidden", "elements", "steps",
              "scale_log2", "accum", "history", "margin")


@pytest.mark.parametrize("key", KEYS_ASKED)
def test_a_renamed_key_stops_the_rules_instead_of_being_not_measured(monkeypatch, key):
    """As if the C++ renamed ``key`` (test_schema.py then brings schema.KEYS to the new name)."""
    monkeypatch.setattr(schema, "KEYS", tuple(k for k in schema.KEYS if k != key) + ("renamed",))
    with pytest.raises(names.UnknownKey, match=f"'{key}' is not a benchmark name key"):
        answer_all(every_input())


def test_rules_write_no_benchmark_name_or_pattern():
    """No string in rules.py (docstrings aside) holds a name (``topic/variant``, ``key:<digits>``)
    or a regular expression: names come from BenchName, queries from ResultSet.find."""
    tree = ast.parse(RULES.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    looks_like_a_name = re.compile(r"[a-z_][a-z0-9_]*/[a-z0-9_]|\b(%s):[0-9\\(]|\\d|\[\^" %
                                   "|".join(schema.KEYS))
    found = [(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and id(node) not in docstrings and looks_like_a_name.search(node.value)]
    assert found == []
    assert "import re\n" not in RULES.read_text()


# ---------------------------------------------------------------------------------------------
# Every question the rules ask, against what the binaries really list


def _listed(bin_dir) -> list[str]:
    out = set()
    for topic in topics():
        for quick in ([], ["--quick"]):
            proc = subprocess.run([str(bin_dir / f"bench_{topic}"), *quick,
                                   "--benchmark_list_tests"], capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode == 0, (topic, proc.stderr)
            out |= {line.strip().removesuffix("/manual_time") for line in proc.stdout.splitlines()
                    if line.strip()}
    return sorted(out)


# A value for every counter a rule reads, so that every branch that reads one is taken.
_COUNTERS = {"tflops": 100.0, "tops": 200.0, "speedup_vs_fp16": 1.5, "speedup_vs_bf16": 1.5,
             "spread_pct": 1.0, "tensor_active_pct": 50.0, "pct_of_peak": 50.0,
             "final_loss": 1.0, "underflow_pct": 1.0, "unscale_pct_of_step": 1.0,
             "rel_error_unquantized": 0.01, "within_budget": 1.0, "fp8_layers": 4.0,
             "gemm_phases_ceiling_pct": 70.0,
             **{schema.time_share(p): 10.0 for p in (*schema.STEP_PHASES, schema.GAPS)}}


@pytest.fixture(scope="module")
def real_inputs(tmp_path_factory) -> list[ResultSet]:
    """The host studies as tcbench_studies writes them, and a GPU run holding every benchmark
    the binaries list (full and --quick), each with a value for every counter a rule reads."""
    bin_dir = built_bin_dir()
    out = tmp_path_factory.mktemp("studies") / "studies.json"
    subprocess.run([str(bin_dir / "tcbench_studies"), "--out", str(out)], check=True,
                   capture_output=True, timeout=300)
    rows = [ad.row(name, label="IMMA", **_COUNTERS) for name in _listed(bin_dir)]
    return [parse_doc(json.loads(out.read_text())), parse_doc(ad.doc(ad.GPU_CONTEXT, rows))]


def test_every_question_a_rule_asks_matches_what_the_binaries_write(monkeypatch, real_inputs):
    asked: list[tuple[str, int]] = []
    find, get = ResultSet.find, ResultSet.get

    def recording_find(self, *args, **kwargs):
        found = find(self, *args, **kwargs)
        asked.append((f"find{args}{kwargs}", len(found)))
        return found

    def recording_get(self, name):
        found = get(self, name)
        asked.append((f"get({name})", int(found is not None)))
        return found

    monkeypatch.setattr(ResultSet, "find", recording_find)
    monkeypatch.setattr(ResultSet, "get", recording_get)
    answers = answer_all(real_inputs)
    assert len(asked) > 30
    assert [query for query, hits in asked if hits == 0] == []
    assert [(a.id, a.scope, a.why) for a in answers if a.verdict == NOT_MEASURED] == []
    assert set(rules.GPU_RULES) == {a.id for a in answers if a.scope == "gpu"}
