"""tcbench's narrow-format C++ against independent references, through the tcbench_formats tool
(tests/tools/tcbench_formats.cpp), so that what is compared is the C++ itself:

- every row of the element table (numerics/element.hpp: max, min normal, min subnormal,
  epsilon, unit roundoff, emax, bits) equals ml_dtypes' or numpy's finfo/iinfo;
- every code of E4M3, E5M2, E3M2, E2M3, E2M1, E8M0 and UE4M3 decodes to ml_dtypes' value;
- encoding equals ml_dtypes' round-to-nearest-even on every FP16 value, on every value of the
  format and on every midpoint between two of them and its float neighbours (E8M0, which CUDA
  rounds only toward zero or up, is checked against the powers of two ml_dtypes decodes);
- the block scale rules and the cuBLASLt scale tensors equal blockscale_reference.py, a numpy
  re-implementation of the specs, on worked examples, random data with outliers, zero blocks,
  partial blocks and special values;
- the scale layouts equal the documentation's picture built with numpy reshapes.
"""

from __future__ import annotations

import json
import os
import subprocess
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import blockscale_reference as ref
from conftest import REPO

F32 = np.float32
ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
      "e3m2": ml_dtypes.float6_e3m2fn, "e2m3": ml_dtypes.float6_e2m3fn,
      "e2m1": ml_dtypes.float4_e2m1fn, "e8m0": ml_dtypes.float8_e8m0fnu}
BITS = {"e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4, "e8m0": 8}


def tool() -> Path:
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        path = Path(build) / "bin" / "tcbench_formats"
        if not path.is_file():
            pytest.fail(f"TCBENCH_BUILD_DIR={build} has no bin/tcbench_formats")
        return path
    found = sorted(REPO.glob("build/*/bin/tcbench_formats"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    if not found:
        pytest.skip("no build with tcbench_formats (scripts/tcbench test builds one)")
    return found[0]


def run(*args: str, stdin: str = "") -> str:
    proc = subprocess.run([str(tool()), *args], input=stdin, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def hex_floats(x: np.ndarray) -> str:
    return "\n".join(f"{v:08x}" for v in np.asarray(x, dtype=F32).view(np.uint32).reshape(-1))


def cpp_decode(fmt: str) -> np.ndarray:
    rows = [line.split() for line in run("decode", fmt).splitlines()]
    assert [int(c) for c, _ in rows] == list(range(len(rows)))
    return np.array([int(v, 16) for _, v in rows], dtype=np.uint32).view(F32)


def cpp_encode(fmt: str, x: np.ndarray, rounding: str = "rz") -> np.ndarray:
    out = run("encode", fmt, rounding, stdin=hex_floats(x))
    return np.array([int(c, 16) for c in out.split()], dtype=np.uint8)


def same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# ---- the element table ---------------------------------------------------------------------

# Each row's independent reference: ml_dtypes' and numpy's finfo (UE4M3 is E4M3 without its sign,
# so E4M3FN's positive limits; TF32 has no dtype anywhere: FP32 with 10 mantissa bits, its
# values written from the definition), iinfo for the integers (min normal, min subnormal and
# epsilon 1, unit roundoff 0: exact arithmetic).
FINFO = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16,
         "e4m3": ML["e4m3"], "e5m2": ML["e5m2"], "e3m2": ML["e3m2"], "e2m3": ML["e2m3"],
         "e2m1": ML["e2m1"], "ue8m0": ML["e8m0"], "ue4m3": ML["e4m3"]}
IINFO = {"int8": np.int8, "int32": np.int32}
TF32 = (2.0 - 2.0 ** -10) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -136, 2.0 ** -10


def cpp_table() -> dict[str, dict]:
    rows = {}
    for line in run("table").splitlines():
        name, bits, emax, *limits, integer = line.split()
        rows[name] = dict(zip(("max", "min_normal", "min_subnormal", "epsilon", "unit_roundoff"),
                              (float.fromhex(v) for v in limits)),
                          bits=int(bits), emax=int(emax), integer=integer == "1")
    return rows


def test_element_table_equals_ml_dtypes_and_numpy():
    rows = cpp_table()
    assert set(rows) == set(FINFO) | set(IINFO) | {"tf32"}
    for name, t in FINFO.items():
        fi = ml_dtypes.finfo(t) if t not in (np.float64, np.float32, np.float16) else np.finfo(t)
        r = rows[name]
        want = (float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal),
                float(fi.eps))
        assert (r["max"], r["min_normal"], r["min_subnormal"], r["epsilon"]) == want, name
        assert r["unit_roundoff"] == float(fi.eps) / 2, name
        assert r["emax"] == fi.maxexp - 1, name
        assert r["bits"] == fi.bits, name
        assert not r["integer"]
    for name, t in IINFO.items():
        r = rows[name]
        ii = np.iinfo(t)
        assert (r["max"], r["min_normal"], r["min_subnormal"], r["epsilon"]) == (ii.max, 1, 1, 1)
        assert r["unit_roundoff"] == 0 and r["integer"] and r["bits"] == ii.bits
        assert r["emax"] == int(ii.max).bit_length() - 1
    tf32 = rows["tf32"]
    assert (tf32["max"], tf32["min_normal"], tf32["min_subnormal"], tf32["epsilon"]) == TF32
    assert tf32["bits"] == 32 and tf32["emax"] == 127 and tf32["unit_roundoff"] == 2.0 ** -11


# ---- conversions ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "e8m0"])
def test_every_code_decodes_to_ml_dtypes_value(fmt):
    cpp = cpp_decode(fmt)
    assert cpp.size == 2 ** BITS[fmt]
    expected = np.arange(cpp.size, dtype=np.uint8).view(ML[fmt]).astype(F32)
    assert same_floats(cpp, expected), np.nonzero(~((cpp == expected) |
                                                    (np.isnan(cpp) & np.isnan(expected))))


def test_ue4m3_is_e4m3_without_its_sign():
    cpp = cpp_decode("ue4m3")
    assert cpp.size == 128
    assert same_floats(cpp, np.arange(128, dtype=np.uint8).view(ML["e4m3"]).astype(F32))


def probe_inputs(fmt: str) -> np.ndarray:
    """Every FP16 value; every value of fmt; every midpoint of two neighbours and the floats
    next to it (where rounding decides)."""
    fp16 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(F32)
    values = np.unique(np.arange(2 ** BITS[fmt], dtype=np.uint8).view(ML[fmt]).astype(F32))
    values = values[np.isfinite(values)]
    mids = ((values[:-1].astype(np.float64) + values[1:]) / 2).astype(F32)
    near = np.concatenate([mids, np.nextafter(mids, F32(np.inf)), np.nextafter(mids, -F32(np.inf))])
    return np.concatenate([fp16, values, near])


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"])
def test_encoding_equals_ml_dtypes_round_to_nearest_even(fmt):
    x = probe_inputs(fmt)
    mx = float(ml_dtypes.finfo(ML[fmt]).max)
    finite_in_range = np.isfinite(x) & (np.abs(x) <= mx)
    cpp = cpp_encode(fmt, x)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = x.astype(ML[fmt]).view(np.uint8)
    inside = finite_in_range
    assert np.array_equal(cpp[inside], expected[inside]), \
        x[inside][cpp[inside] != expected[inside]][:8]
    # Beyond the max (and +-Inf) CUDA's conversion saturates to +-max: the clamped value's code.
    beyond = ~np.isnan(x) & ~finite_in_range
    clamped = np.clip(x[beyond], -mx, mx).astype(ML[fmt]).view(np.uint8)
    assert np.array_equal(cpp[beyond], clamped)
    # NaN: FP8 keeps NaN; FP6/FP4 have none and CUDA documents +MAXNORM (ml_dtypes gives -0).
    nan_code = cpp_encode(fmt, np.array([np.nan], dtype=F32))[0]
    if fmt in ("e4m3", "e5m2"):
        assert np.isnan(np.array([nan_code], dtype=np.uint8).view(ML[fmt]).astype(F32))[0]
    else:
        assert nan_code == np.array([mx], dtype=F32).astype(ML[fmt]).view(np.uint8)[0]


def test_e8m0_rounds_to_the_powers_of_two_ml_dtypes_decodes():
    powers = np.arange(255, dtype=np.uint8).view(ML["e8m0"]).astype(np.float64)  # 2^-127..2^127
    x = probe_inputs("e4m3")
    x = np.concatenate([x, powers.astype(F32), (powers * 1.5).astype(F32)])
    x = x[np.isfinite(x) & (x > 0) & (x < 2.0 ** 127)]
    down, up = cpp_encode("e8m0", x, "rz"), cpp_encode("e8m0", x, "up")
    xd = x.astype(np.float64)
    want_down = np.clip(np.searchsorted(powers, xd, side="right") - 1, 0, 254)
    want_up = np.clip(np.searchsorted(powers, xd, side="left"), 0, 254)
    assert np.array_equal(down, want_down)
    assert np.array_equal(up, want_up)
    # ml_dtypes' own rounding (to nearest) lands on one of the two, and equals both on powers.
    nearest = x.astype(ML["e8m0"]).view(np.uint8)
    assert np.all((nearest == down) | (nearest == up))
    exact = np.isin(xd, powers)
    assert np.array_equal(nearest[exact], down[exact])
    nan = cpp_encode("e8m0", np.array([np.nan], dtype=F32), "up")[0]
    assert nan == 0xFF


# ---- scale rules -----------------------------------------------------------------------------

def cpp_quantize(x: np.ndarray, granularity: str, fmt: str, rule: str = "ocp",
                 tensor_amax: float | None = None) -> dict:
    args = ["quantize", granularity, fmt, str(x.shape[0]), str(x.shape[1]), rule]
    if tensor_amax is not None:
        args.append(f"{np.array([tensor_amax], dtype=F32).view(np.uint32)[0]:08x}")
    out = json.loads(run(*args, stdin=hex_floats(x)))
    out["codes"] = np.array(out["codes"], dtype=np.uint8)
    out["scales"] = np.array([int(v, 16) for v in out["scales"]], dtype=np.uint32).view(F32)
    out["scale_codes"] = np.array(out["scale_codes"], dtype=np.uint8)
    out["tensor_scale"] = np.array([int(out["tensor_scale"], 16)], dtype=np.uint32).view(F32)[0]
    out["cublas"] = np.frombuffer(bytes.fromhex(out["cublas"]), dtype=np.uint8)
    return out


def test_reference_holds_on_the_worked_examples():
    # The cases derived by hand in tests/host/numerics/test_block_scaling.cpp.
    assert ref.mx_scale_code(1.0, "e4m3", "ocp") == 119
    assert ref.mx_scale_code(1.9, "e4m3", "round_up") == 120
    assert ref.mx_scale_code(6.0, "e2m1", "ocp") == 127
    assert ref.mx_scale_code(7.0, "e2m1", "round_up") == 128
    assert ref.encode(F32(1.9) * F32(256), "e4m3")[()] == 0x7E  # clamped
    assert ref.nvfp4_tensor_scale(12.0) == 224
    assert ref.ue4m3(F32(3.0) / F32(6) * F32(224))[()] == ref.encode(F32(112), "e4m3")[()]
    assert ref.encode(F32(-1.0) * F32(2.0), "e2m1")[()] == 0xC


def matrix(rows: int, cols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(F32)
    x[:, 3] *= F32(300)                   # an outlier channel
    if rows > 11:
        x[7, :] *= F32(1e-3)              # a quiet row
        x[9, : min(cols, 64)] = 0         # zero blocks
        x[11, 5] = F32(2.0 ** -130)       # an FP32 subnormal
    x *= np.exp(rng.standard_normal((rows, 1))).astype(F32)  # rows of different scale
    return x


CASES = [("tensor", "e4m3", "ocp"), ("tensor", "e5m2", "ocp"), ("row", "e4m3", "ocp"),
         ("1x128", "e4m3", "ocp"), ("128x128", "e4m3", "ocp"), ("nvfp4", "e2m1", "ocp")] + [
         ("mx", fmt, rule) for fmt in ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
         for rule in ("ocp", "round_up")]


@pytest.mark.parametrize("granularity,fmt,rule", CASES)
def test_scale_rules_equal_the_reference(granularity, fmt, rule):
    x = matrix(130, 300, seed=zlib.crc32(f"{granularity}{fmt}".encode()) % 1000)
    cpp = cpp_quantize(x, granularity, fmt, rule)
    want = ref.quantize(x, granularity, fmt, rule)
    assert np.array_equal(cpp["scale_codes"], want["scale_codes"])
    assert np.array_equal(cpp["scales"].view(np.uint32), want["scales"].view(np.uint32))
    assert cpp["tensor_scale"] == want["tensor_scale"]
    assert np.array_equal(cpp["codes"], want["codes"]), np.nonzero(cpp["codes"] != want["codes"])


def test_delayed_scaling_uses_the_given_amax():
    x = matrix(64, 64, seed=3)
    stale = float(np.max(np.abs(x))) / 4  # last step's amax, 4x too small: saturates
    cpp = cpp_quantize(x, "tensor", "e4m3", "ocp", tensor_amax=stale)
    want = ref.quantize(x, "tensor", "e4m3", tensor_amax=stale)
    assert np.array_equal(cpp["codes"], want["codes"])
    assert np.count_nonzero((cpp["codes"] & 0x7F) == 0x7E) > 0


def test_mx_nan_and_inf_blocks_have_a_nan_scale():
    x = matrix(4, 64, seed=5)
    x[1, 40] = np.nan
    x[2, 3] = np.inf
    for fmt in ("e4m3", "e2m1"):
        cpp = cpp_quantize(x, "mx", fmt)
        assert cpp["scale_codes"][1 * 2 + 1] == 0xFF
        assert cpp["scale_codes"][2 * 2 + 0] == 0xFF
        want = ref.quantize(x, "mx", fmt)
        keep = np.repeat(want["scale_codes"] != 0xFF, 32)
        assert np.array_equal(cpp["codes"][keep], want["codes"][keep])


# ---- cuBLASLt scale layouts ------------------------------------------------------------------

def cpp_layout(mode: str, outer: int, inner: int) -> tuple[np.ndarray, int]:
    lines = run("layout", mode, str(outer), str(inner)).splitlines()
    assert lines[0].startswith("# elements ")
    return np.array([int(v) for v in lines[1:]], dtype=np.int64), int(lines[0].split()[-1])


@pytest.mark.parametrize("outer,inner", [(128, 128), (256, 512), (130, 48), (384, 1040), (1, 16)])
@pytest.mark.parametrize("mode,block", [("vec16", 16), ("vec32", 32)])
def test_tiled_layout_equals_the_documented_picture(outer, inner, mode, block):
    offsets, size = cpp_layout(mode, outer, inner)
    want, want_size = ref.tiled_offsets(outer, -(-inner // block))
    assert size == want_size
    assert np.array_equal(offsets, want)


@pytest.mark.parametrize("outer,inner", [(128, 128), (260, 1000), (4, 640)])
def test_vec128_and_blk128_layouts(outer, inner):
    offsets, size = cpp_layout("vec128", outer, inner)
    want, want_size = ref.vec128_offsets(outer, inner)
    assert (size, offsets.tolist()) == (want_size, want.tolist())
    offsets, size = cpp_layout("blk128", outer, inner)
    want, want_size = ref.blk128_offsets(outer, inner)
    assert (size, offsets.tolist()) == (want_size, want.tolist())


@pytest.mark.parametrize("granularity,fmt", [("row", "e4m3"), ("1x128", "e4m3"),
                                             ("128x128", "e4m3"), ("mx", "e4m3"),
                                             ("nvfp4", "e2m1")])
def test_cublas_scale_tensor_is_the_logical_scales_scattered_by_the_layout(granularity, fmt):
    rows, cols = 130, 300
    x = matrix(rows, cols, seed=11)
    cpp = cpp_quantize(x, granularity, fmt)
    if granularity == "row":
        want = cpp["scales"].view(np.uint8)
    elif granularity in ("1x128", "128x128"):
        offsets, size = (ref.vec128_offsets(rows, cols) if granularity == "1x128"
                         else ref.blk128_offsets(rows, cols))
        out = np.zeros(size, dtype=F32)
        out[offsets] = cpp["scales"]
        want = out.view(np.uint8)
    else:
        offsets, size = ref.tiled_offsets(rows, -(-cols // ref.BLOCK[granularity]))
        want = np.zeros(size, dtype=np.uint8)
        want[offsets] = cpp["scale_codes"]
    assert np.array_equal(cpp["cublas"], want)


def test_tool_refuses_bad_input_with_one_line():
    proc = subprocess.run([str(tool()), "quantize", "mx", "e9m9", "2", "2"], input="",
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "unknown format" in proc.stderr
