"""An independent numpy re-implementation of the block scale rules and cuBLASLt's scale layouts,
written from the specs' text (not from tcbench's C++), for tests/scripts/test_narrow_formats.py.

Element rounding is ml_dtypes' (round to nearest even); every rule saturates by clamping to the
element format's max before rounding, which is what "normal numbers beyond the max are clamped"
(OCP MX v1.0 section 6.3) and CUDA's satfinite conversions amount to.

  MX (OCP Microscaling Formats v1.0, section 6.3): shared_exp = floor(log2(max |V_i|)) - emax_elem,
      X = 2^shared_exp (E8M0: 2^-127 .. 2^127, 0xFF NaN), P_i = quantize(V_i / X).
      "round_up": cuBLAS's 1D block quantization: X = amax / max_elem rounded up to a power of 2.
  NVFP4 (arXiv:2509.25149): s_enc = 6 * 448 / amax(tensor), block scale e4m3(amax(block) / 6 *
      s_enc), element e2m1(x * s_enc / block scale).
  Group current scaling (DeepSeek-V3 1x128 / 128x128, row-wise, per tensor): multiplier
      448 / amax (1 for amax 0), element e4m3(x * multiplier), stored scale 1 / multiplier.
  Layouts (cuBLAS documentation, "1D Block Scaling Factors Layout" and "Scaling factors
      layouts"): see the functions below.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

F32 = np.float32
ELEMENTS = {
    # name: (ml_dtypes type, emax, max)
    "e4m3": (ml_dtypes.float8_e4m3fn, 8, 448.0),
    "e5m2": (ml_dtypes.float8_e5m2, 15, 57344.0),
    "e3m2": (ml_dtypes.float6_e3m2fn, 4, 28.0),
    "e2m3": (ml_dtypes.float6_e2m3fn, 2, 7.5),
    "e2m1": (ml_dtypes.float4_e2m1fn, 2, 6.0),
}
BLOCK = {"1x128": 128, "128x128": 128, "mx": 32, "nvfp4": 16}


def encode(x, fmt: str) -> np.ndarray:
    """Codes of x (float32) rounded to nearest even in fmt, saturating; NaN stays NaN (FP8)."""
    dtype, _, mx = ELEMENTS[fmt]
    x = np.asarray(x, dtype=F32)
    clamped = np.where(np.isnan(x), x, np.clip(x, -mx, mx)).astype(F32)
    return clamped.astype(dtype).view(np.uint8)


def decode(codes, fmt: str) -> np.ndarray:
    dtype = ELEMENTS[fmt][0]
    return np.asarray(codes, dtype=np.uint8).view(dtype).astype(F32)


def e8m0_value(code: int) -> float:
    return float("nan") if code == 0xFF else 2.0 ** (code - 127)


def mx_scale_code(amax: float, fmt: str, rule: str) -> int:
    amax = F32(amax)
    if not np.isfinite(amax):
        return 0xFF
    if amax == 0:
        return 0
    _, emax, mx = ELEMENTS[fmt]
    if rule == "round_up":
        s = F32(amax / F32(mx))
        mant, exp = np.frexp(s)  # s = mant * 2^exp, mant in [0.5, 1)
        e = int(exp) - 1 if mant == 0.5 else int(exp)  # ceil(log2(s))
        return int(min(max(e, -127), 127) + 127)
    _, exp = np.frexp(amax)
    shared = int(exp) - 1 - emax  # floor(log2(amax)) - emax_elem
    if shared < -127:
        return 0
    if shared > 127:
        return 0xFF
    return shared + 127


def group_multiplier(amax: float, fmt: str) -> np.float32:
    amax = F32(amax)
    if not (amax > 0) or not np.isfinite(amax):
        return F32(1)
    with np.errstate(over="ignore"):
        s = F32(F32(ELEMENTS[fmt][2]) / amax)
    return s if np.isfinite(s) else F32(np.finfo(F32).max)


def nvfp4_tensor_scale(amax: float) -> np.float32:
    amax = F32(amax)
    if not (amax > 0) or not np.isfinite(amax):
        return F32(1)
    with np.errstate(over="ignore"):
        s = F32(F32(6 * 448) / amax)
    return s if np.isfinite(s) else F32(np.finfo(F32).max)


def ue4m3(x) -> np.ndarray:
    return encode(np.abs(np.asarray(x, dtype=F32)), "e4m3") & 0x7F


def amax(a) -> np.float32:
    a = np.asarray(a, dtype=F32)
    if np.isnan(a).any():
        return F32(np.nan)
    return F32(np.max(np.abs(a))) if a.size else F32(0)


def quantize(x: np.ndarray, granularity: str, fmt: str, rule: str = "ocp",
             tensor_amax: float | None = None) -> dict:
    """x: rows x cols float32, K-major. Returns codes, FP32 scales, scale codes, tensor scale."""
    x = np.asarray(x, dtype=F32)
    rows, cols = x.shape
    codes = np.zeros_like(x, dtype=np.uint8)
    scales: list[np.float32] = []
    scale_codes: list[int] = []
    tensor_scale = F32(1)
    if granularity == "tensor":
        m = group_multiplier(amax(x) if tensor_amax is None else tensor_amax, fmt)
        codes = encode(x * m, fmt).reshape(rows, cols)
        scales = [F32(F32(1) / m)]
    elif granularity in ("row", "1x128"):
        width = cols if granularity == "row" else 128
        for r in range(rows):
            for c0 in range(0, cols, width):
                block = x[r, c0:c0 + width]
                m = group_multiplier(amax(block), fmt)
                codes[r, c0:c0 + width] = encode(block * m, fmt)
                scales.append(F32(F32(1) / m))
    elif granularity == "128x128":
        for r0 in range(0, rows, 128):
            for c0 in range(0, cols, 128):
                block = x[r0:r0 + 128, c0:c0 + 128]
                m = group_multiplier(amax(block), fmt)
                codes[r0:r0 + 128, c0:c0 + 128] = encode(block * m, fmt)
                scales.append(F32(F32(1) / m))
    elif granularity == "mx":
        for r in range(rows):
            for c0 in range(0, cols, 32):
                block = x[r, c0:c0 + 32]
                sc = mx_scale_code(amax(block), fmt, rule)
                scale_codes.append(sc)
                if sc == 0xFF:
                    codes[r, c0:c0 + 32] = encode(np.full(block.shape, np.nan, F32), fmt)
                else:
                    codes[r, c0:c0 + 32] = encode(np.ldexp(block, 127 - sc).astype(F32), fmt)
    elif granularity == "nvfp4":
        tensor_scale = nvfp4_tensor_scale(amax(x))
        for r in range(rows):
            for c0 in range(0, cols, 16):
                block = x[r, c0:c0 + 16]
                sc = int(ue4m3(F32(amax(block) / F32(6)) * tensor_scale))
                scale_codes.append(sc)
                s = decode(np.uint8(sc), "e4m3")
                if s == 0:
                    codes[r, c0:c0 + 16] = 0
                else:
                    codes[r, c0:c0 + 16] = encode(block * F32(tensor_scale / s), "e2m1")
    else:
        raise ValueError(granularity)
    return {"codes": codes.reshape(-1), "scales": np.array(scales, dtype=F32),
            "scale_codes": np.array(scale_codes, dtype=np.uint8), "tensor_scale": tensor_scale}


# ---- cuBLASLt scale layouts ------------------------------------------------------------------

def tiled_offsets(outer: int, blocks: int) -> tuple[np.ndarray, int]:
    """VEC16/VEC32: offsets of the logical (outer x blocks) scales, built as the documentation's
    pictures draw it: pad to whole 128x4 tiles, cut each tile into four 32-row strips laid side
    by side (a 32 x 16 byte picture: row i holds rows i, i+32, i+64, i+96, four scales each),
    tiles in row-major order."""
    r_pad = -(-outer // 128) * 128
    c_pad = -(-blocks // 4) * 4
    logical = np.arange(r_pad * c_pad).reshape(r_pad, c_pad)
    tiles = logical.reshape(r_pad // 128, 4, 32, c_pad // 4, 4)  # [tile row, strip, i, tile col, j]
    memory = tiles.transpose(0, 3, 2, 1, 4).reshape(-1)         # [tile row, tile col, i, strip, j]
    offset_of = np.empty(r_pad * c_pad, dtype=np.int64)
    offset_of[memory] = np.arange(memory.size)
    return offset_of.reshape(r_pad, c_pad)[:outer, :blocks].reshape(-1), r_pad * c_pad


def vec128_offsets(outer: int, inner: int) -> tuple[np.ndarray, int]:
    """M-major (outer-major) outer x L: element (i, b) follows (i - 1, b)."""
    blocks = -(-inner // 128)
    memory = np.arange(outer * blocks).reshape(blocks, outer)  # column b holds all rows
    return memory.T.reshape(-1), outer * blocks


def blk128_offsets(outer: int, inner: int) -> tuple[np.ndarray, int]:
    """K-major L4 x ceil(outer / 128), the column stride L rounded up to 4."""
    blocks = -(-inner // 128)
    ld = -(-blocks // 4) * 4
    p = -(-outer // 128)
    memory = np.arange(p * ld).reshape(p, ld)[:, :blocks]
    return memory.reshape(-1), p * ld
