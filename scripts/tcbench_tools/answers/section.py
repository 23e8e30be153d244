"""The verdicts on the five questions per source for the report's first screen (sections/
_glance.py draws them): the host studies once, then each GPU's under its report label.

The host studies come from the inputs themselves (a studies.json given to the report) or, for a
run folder's results.json, from the studies.json that ``tcbench run`` wrote beside it."""

from __future__ import annotations

from pathlib import Path

from tcbench_tools import results
from tcbench_tools.answers import STUDIES_FILE, evidence, rules
from tcbench_tools.answers.model import QUESTIONS, Answer
from tcbench_tools.answers.render import HOST_LABEL
from tcbench_tools.errors import InputError


def host_studies(sets: list[results.ResultSet]) -> results.ResultSet | None:
    """The host studies among the inputs, else the studies.json beside an input's file."""
    given = [rs for rs in sets if evidence.is_host(rs)]
    if given:
        return given[-1]
    for rs in sets:
        if not rs.path or not Path(rs.path).is_file():
            continue  # parsed in memory: there is no folder to look beside
        beside = Path(rs.path).parent / STUDIES_FILE
        if beside.is_file():
            try:
                found = results.load(beside)
            except InputError:
                continue  # a broken studies file beside a run: the host half is not measured
            if evidence.is_host(found):
                return found
    return None


def answers_for(sets: list[results.ResultSet], labels: list[str]) -> tuple[list[str],
                                                                           list[Answer]]:
    """(sources, answers): the host half once, then each GPU's under its report label."""
    host = host_studies(sets)
    out: list[Answer] = []
    sources = []
    if host is not None:
        sources.append(HOST_LABEL)
        for q in QUESTIONS:
            if q.id in rules.HOST_RULES:
                a = rules.HOST_RULES[q.id](host)
                a.label = HOST_LABEL
                out.append(a)
    for rs, label in zip(sets, labels):
        if evidence.is_host(rs):
            continue
        sources.append(label)
        for q in QUESTIONS:
            a = rules.GPU_RULES[q.id](rs)
            a.label = label
            out.append(a)
    return sources, out


__all__ = ["answers_for", "host_studies"]
