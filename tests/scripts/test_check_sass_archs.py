"""tests/sass/check_sass.py: which rules apply at an architecture that only the arch-specific
binaries bring. The family-specific Blackwell build (kernels/block_quant_blackwell.cu: cubins
cuobjdump calls sm_100, sm_110, sm_120) adds those archs to builds that do not target them
portably (native on a Hopper box, "120-real" alone): a rule about portable code (tensor_peak's
QMMA rule for ["sm_89", "sm_120"]) must not fail there for want of a kernel, while a rule about an
arch-specific kernel (wgmma on sm_90a, block_quant's family build) still must.
"""

import importlib.util

from conftest import REPO

_spec = importlib.util.spec_from_file_location("check_sass",
                                               REPO / "tests" / "sass" / "check_sass.py")
check_sass = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_sass)

SPECIFIC = {
    "_ZN7tcbench7kernels9blackwell23block_quant_rows_kernelINS1_12Nvfp4RowRuleEEEvPKfllT_Ph",
    "_ZN7tcbench7kernels26tensor_peak_wgmma_kernelINS2_8WgmmaF16EEEvv",
}


def applies_nowhere(rule, arch, portable):
    return check_sass.about_portable_code(rule, arch, portable, SPECIFIC)


def test_a_portable_arch_always_checks():
    rule = {"kernel": "tensor_peak_mma_kernelINS2_10MmaE4m3F32", "archs": ["sm_89", "sm_120"]}
    assert not applies_nowhere(rule, "sm_120", {"sm_120"})


def test_portable_rule_at_an_arch_only_the_family_build_has():
    # "120-real" build: sm_100 comes only from the family library.
    qmma = {"kernel": "tensor_peak_mma_kernelINS2_10MmaE4m3F32", "archs": ["sm_89", "sm_120"]}
    emulated = {"kernel": "tensor_peak_mma_kernelINS2_10MmaE4m3F32",
                "archs": ["sm_90", "sm_90a", "sm_100", "sm_100a", "sm_110"]}
    assert applies_nowhere(qmma, "sm_100", {"sm_120"})
    assert applies_nowhere(emulated, "sm_100", {"sm_120"})
    # Native on a Hopper box: one of the rule's archs is portable, as before.
    assert applies_nowhere(emulated, "sm_100", {"sm_90"})


def test_rules_about_arch_specific_kernels_still_fail_when_missing():
    family = {"kernel": "9blackwell23block_quant_rows_kernelINS1_12Nvfp4RowRuleE",
              "archs": ["sm_100", "sm_110", "sm_120"]}
    wgmma = {"kernel": "tensor_peak_wgmma_kernelINS2_8WgmmaF16", "archs": ["sm_90a"]}
    gone = {"kernel": "tensor_peak_wgmma_kernelINS2_9WgmmaBf16", "archs": ["sm_90a"]}
    assert not applies_nowhere(family, "sm_110", {"sm_90"})
    assert not applies_nowhere(wgmma, "sm_90a", {"sm_90"})
    assert not applies_nowhere(gone, "sm_90a", {"sm_80"})  # its kernel vanished: a failure
