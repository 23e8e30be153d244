"""tests/sass/check_sass.py's hot loop on SASS shaped like the tcgen05 kernels': the loop of one
trip's two UTCHMMA, not the span of an out-of-line slow path that jumps back over them (ptxas puts
the retry of a cluster barrier after the kernel's EXIT), and the "operands" rule that tells a
block-scaled UTCQMMA (scale factors in TMEM) from an unscaled one."""

import importlib.util

from conftest import REPO

_spec = importlib.util.spec_from_file_location("check_sass",
                                               REPO / "tests" / "sass" / "check_sass.py")
check_sass = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_sass)


def sass(lines: list[str]) -> str:
    return "\n".join(f"        /*{16 * i:04x}*/                   {line} ;  /* 0x0 */"
                     for i, line in enumerate(lines))


# Addresses are 16 x the line index: 0x0000, 0x0010, ...
PAIR = sass([
    "UCGABAR_ARV",                                                                  # 0x00
    "UTCHMMA.2CTA gdesc[UR6], gdesc[UR8], tmem[UR13], tmem[UR4], idesc[UR5], !UPT",  # 0x10
    "IADD3 R2, P0, PT, R2, -0x1, RZ",                                               # 0x20
    "UTCHMMA.2CTA gdesc[UR6], gdesc[UR10], tmem[UR13], tmem[UR4], idesc[UR5], UPT",  # 0x30
    "UTCHMMA.2CTA gdesc[UR6], gdesc[UR8], tmem[UR13], tmem[UR4], idesc[UR5], UPT",   # 0x40
    "@P0 BRA 0x20",                                                                 # 0x50
    "UTCBAR.2CTA.MULTICAST [UR15], URZ, UR19",                                      # 0x60
    "@P3 EXIT",                                                                     # 0x70
    "EXIT",                                                                         # 0x80
    "UCGABAR_WAIT",                                                                 # 0x90
    "BRA 0x0",                                                                      # 0xa0
])


def test_the_hot_loop_is_the_trip_not_a_slow_paths_return():
    body = check_sass.hot_loop(PAIR)
    assert body == ["IADD3", "UTCHMMA.2CTA", "UTCHMMA.2CTA", "BRA"]
    rule = {"tensor": r"UTCHMMA\.2CTA"}
    assert check_sass.check_loop(rule, 2, PAIR) is None


def test_without_the_exit_the_return_span_would_count_three():
    # The same code with the kernel's unconditional EXIT predicated: then the span from 0x0 to
    # the last branch is a loop, holds all three instructions, and the rule fails.
    looped = PAIR.replace("  EXIT ;", "  @P1 EXIT ;")
    assert check_sass.hot_loop(looped).count("UTCHMMA.2CTA") == 3
    why = check_sass.check_loop({"tensor": r"UTCHMMA\.2CTA"}, 2, looped)
    assert why.startswith("the hot loop holds 3 UTCHMMA\\.2CTA, but one trip issues 2")


def test_operands_tell_block_scaled_from_unscaled():
    scaled = sass([
        "UTCQMMA gdesc[UR8], gdesc[UR12], tmem[UR14], tmem[UR4], idesc[UR5], tmem[UR18], UPT",
        "UTCQMMA gdesc[UR8], gdesc[UR10], tmem[UR14], tmem[UR4], idesc[UR5], tmem[UR18], UPT",
        "@P0 BRA 0x0",
    ])
    with_scales = {"tensor": "UTCQMMA", "operands": r"idesc\[UR\d+\], tmem\[UR\d+\]"}
    without = {"tensor": "UTCQMMA", "operands": r"idesc\[UR\d+\], !?UPT"}
    assert check_sass.check_loop(with_scales, 2, scaled) is None
    why = check_sass.check_loop(without, 2, scaled)
    assert why.startswith("2 of the hot loop's 2 UTCQMMA lack operands matching")
    assert check_sass.check_loop(with_scales, 2, PAIR.replace("UTCHMMA.2CTA", "UTCQMMA")) \
        .startswith("2 of the hot loop's 2")  # unscaled instructions under the scaled rule
