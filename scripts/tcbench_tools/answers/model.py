"""What an answer is: a verdict on one claim, from one source of evidence (the host studies, or
one GPU's run), with the numbers it rests on, the caveats that the usual statement omits and the
notes that qualify no verdict.

An answer keeps one invariant, which the tests check on every rule: "holds" has no caveat (what
it says beside the verdict are notes), "holds with a caveat" and "does not hold here" have at
least one (for the latter, why), and "not measured" says in ``why`` what was missing."""

from __future__ import annotations

from dataclasses import dataclass, field

from tcbench_tools import schema

HOLDS = "holds"
CAVEAT = "holds with a caveat"
FAILS = "does not hold here"
NOT_MEASURED = "not measured"
VERDICTS = (HOLDS, CAVEAT, FAILS, NOT_MEASURED)
# A verdict in a narrow table cell (the report's first screen), and the class that colours its
# cell in every page (doc.py's style holds the colours).
SHORT = {HOLDS: "holds", CAVEAT: "caveat", FAILS: "does not hold", NOT_MEASURED: "not measured"}
CLASS = {HOLDS: "v-holds", CAVEAT: "v-caveat", FAILS: "v-fails", NOT_MEASURED: "v-none"}

HOST, GPU = "host", "gpu"  # the two halves of a question
# The row of the answers without a GPU (host studies, the GEMM time model, published measurements).
HOST_LABEL = "without a GPU"


@dataclass(frozen=True)
class Evidence:
    source: str  # the benchmark or study row it comes from
    metric: str  # a counter name, "time", or a derived quantity named in the rule
    value: float
    # What the value is counted in where the counter's schema unit does not say it: "fraction"
    # (0.02 = 2 %), "x" (a ratio); else the schema's unit (evidence.unit_of).
    unit: str = ""


# Counters whose schema unit is empty but which are fractions (relative errors): said so.
FRACTIONS = (schema.REL_ERROR, schema.REL_ERROR_UNQUANTIZED, schema.BLOCK_REL_ERROR,
             schema.DELAYED_ERROR_MEAN, schema.DELAYED_ERROR_WORST, schema.CURRENT_ERROR_MEAN)


def unit_of(e: Evidence) -> str:
    """The unit a reader sees beside an evidence value: a fraction or a percent, never unsaid."""
    return e.unit or ("fraction" if e.metric in FRACTIONS else schema.unit(e.metric))


@dataclass
class Answer:
    id: str  # "q1".."q5"
    claim: str
    verdict: str
    scope: str  # HOST or GPU
    gpu: str | None  # the GPU's name for GPU answers; None for the host studies
    evidence: list[Evidence] = field(default_factory=list)
    # "holds with a caveat": where the usual statement is too simple here, or which part of the
    # claim these results could not test; "does not hold here": why. Never on "holds".
    caveats: list[str] = field(default_factory=list)
    # What qualifies no verdict: the number the verdict rests on in words, facts stated on every
    # answer of the question (no padding since cuBLAS 11), evidence that is absent but not needed.
    notes: list[str] = field(default_factory=list)
    rule: str = ""  # the rule that decided, in one sentence (docs/concepts/answers.md)
    why: str = ""  # for "not measured": what was missing
    # What kind of numbers the answer rests on: "measured on this GPU" (a GPU half that measured
    # something), "host studies (CPU)" (what the CPU computed), "model (no measurement)",
    # "published measurements (GPU; source)"; empty for a GPU half that measured nothing.
    basis: str = ""
    # The row this answer is shown in: "without a GPU" for the host half, else the run's label
    # (the GPU name, made unique as the report makes it when two runs share one).
    label: str = ""
    # The evidence came from a file that carries tcbench_synthetic (a test fixture).
    synthetic: bool = False
    # The run stopped early (its tcbench_incomplete: why, and what never ran); "" when it did not.
    incomplete: str = ""

    def as_json(self) -> dict:
        return {"id": self.id, "claim": self.claim, "verdict": self.verdict, "gpu": self.gpu,
                "scope": self.scope, "label": self.label, "synthetic": self.synthetic,
                "evidence": [{"source": e.source, "metric": e.metric, "value": e.value,
                              "unit": unit_of(e)} for e in self.evidence],
                "caveats": list(self.caveats), "notes": list(self.notes), "rule": self.rule,
                **({"basis": self.basis} if self.basis else {}),
                **({"why": self.why} if self.why else {}),
                **({"incomplete": self.incomplete} if self.incomplete else {})}


@dataclass(frozen=True)
class Question:
    id: str
    title: str  # a few words for tables
    claim: str  # in tcbench's words (docs/concepts/answers.md)
    page: str  # the concept page that holds the sources

    @property
    def evidence(self) -> dict:
        """The rows its GPU verdict rests on, as ``names.Query`` by name: declared beside its rule
        (rules.Q<n>_EVIDENCE), read by it, and run first by gpu_check (its tier 1)."""
        from tcbench_tools.answers import rules  # the rules import this module

        return rules.EVIDENCE[self.id]


QUESTIONS = (
    Question("q1", "INT8 inference",
             "Turing and later Tensor Cores run INT8 GEMM natively, so a model trained in "
             "FP32/FP16 and calibrated (PTQ) or trained with fake quantization (QAT) runs in INT8 "
             "on Tensor Cores with little accuracy lost.",
             "docs/concepts/int8-calibration.md"),
    Question("q2", "FP16 loss scaling",
             "FP16's smallest positive value is about 6e-8 (2^-24, subnormal), so small gradients "
             "underflow; multiplying the loss by a large factor before the backward pass shifts "
             "them into range. BF16 does not need it.",
             "docs/concepts/loss-scaling.md"),
    Question("q3", "Tensor-pipe utilization",
             "A high sm__pipe_tensor_cycles_active (the fraction of cycles the tensor pipes are "
             "busy) is the metric that shows Tensor Cores are heavily used.",
             "docs/concepts/tensor-util.md"),
    Question("q4", "Batch 32 vs 33",
             "A batch of 32 beats 33 because Tensor Core tiles want dimensions that are multiples "
             "of 8 (or 16), and 33 needs padding that wastes cycles.",
             "docs/concepts/alignment.md"),
    Question("q5", "FP8 with per-tensor scaling",
             "On Hopper, the Transformer Engine uses FP8/FP16/BF16 per layer to maximize "
             "throughput with little accuracy loss, kept accurate by per-tensor scaling factors.",
             "docs/concepts/fp8-scaling.md"),
)
BY_ID = {q.id: q for q in QUESTIONS}
