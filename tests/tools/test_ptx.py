"""Every kernel compiled to PTX for the GPUs students have, without a GPU (gpgpu_tools.ptx), and
what the lessons claim about that PTX: wide loads and stores, .const tables, values in registers.

What `make test CUDA=cu12` (CI) compiles: every registered kernel, in every signature, for sm_75
(the oldest GPU students have: what it accepts, the newer ones accept too), assembled by ptxas;
the kernels of LESSON_CLAIMS for all four architectures (ptxas for sm_75 and sm_90), their
claims checked on each. GPGPU_LESSONS_PTX_EVERY_ARCH=1 compiles every kernel for all four (about
1.5 times the CPU: Numba lowers each kernel once, NVVM and ptxas run once per architecture).

The compilation runs in a compile-only subprocess (this process runs the simulator). It needs
the CUDA compiler wheels (pip install -e ".[cu12]"): without them these tests skip (the
`cuda_compiler` fixture of tests/conftest.py), except under `make test CUDA=cu12`, which installs
them and makes a missing compiler a failure. The loop itself is proven on test-only kernels
(tests/tools/ptx_samples): the clean ones must compile with known PTX, the broken
ones must fail, each failure naming its kernel.
"""

import os
import sys
from pathlib import Path

import pytest
from gpgpu_tools import ptx

from gpgpu_lessons import ptxfacts

TESTS = Path(__file__).resolve().parent
SAMPLES = ("ptx_samples.clean", "ptx_samples.broken")

# (module, kernel, signature or None for all of its signatures, claim of ptx.CLAIMS): what a
# lesson says about a kernel's PTX, checked on every architecture.
LESSONS = "gpgpu_lessons."
EVERY_ARCH_VARIABLE = "GPGPU_LESSONS_PTX_EVERY_ARCH"
PACKAGE_ARCHS = tuple(ptx.ARCHITECTURES) if os.environ.get(EVERY_ARCH_VARIABLE) else ("sm_75",)
F32_2D = "void(float32[:, ::1], float32[:, ::1], int64)"
LESSON_CLAIMS = [
    # lesson 01: the best copy moves one 16-byte element per thread, in one load and one store
    (
        "l01_coalescing.fast",
        "copy_vectors",
        "void(complex128[::1], complex128[::1])",
        "16-byte loads and stores",
    ),
    ("l01_coalescing.fast", "copy_unrolled", None, "in registers"),
    # lesson 02: the word kernels hold their words in registers, all loaded before the stores
    # (formerly test_shared_memory.py::test_word_kernels_hold_their_words_in_registers, skipped
    # without a GPU)
    ("l02_shared_memory.fast", "negative_words", None, "in registers"),
    ("l02_shared_memory.fast", "negative_words", None, "4 loads before the first store"),
    # the bulk path (rows of whole aligned words) and the general flips
    ("l02_shared_memory.whole_rows", "flip_vertical_whole_rows_4B_x4", None, "in registers"),
    (
        "l02_shared_memory.whole_rows",
        "flip_vertical_whole_rows_4B_x4",
        None,
        "4 loads before the first store",
    ),
    ("l02_shared_memory.whole_rows", "flip_vertical_whole_rows_16B_x4", None, "in registers"),
    (
        "l02_shared_memory.whole_rows",
        "flip_vertical_whole_rows_16B_x4",
        None,
        "16-byte loads and stores",
    ),
    ("l02_shared_memory.whole_rows", "flip_horizontal_whole_rows_rgb_4B_x4", None, "in registers"),
    (
        "l02_shared_memory.whole_rows",
        "flip_horizontal_whole_rows_gray_4B_x4",
        None,
        "4 loads before the first store",
    ),
    ("l02_shared_memory.fast", "flip_vertical_words_8B_x2_i32", None, "in registers"),
    ("l02_shared_memory.fast", "flip_vertical_words_8B_x2_i32", None, "8-byte loads and stores"),
    ("l02_shared_memory.fast", "flip_horizontal_words_rgb_8B_x4_i32", None, "in registers"),
    # lesson 03: the wide transpose and copy move 2 (float32: 8 bytes) or 4 neighbours (16 bytes)
    # per instruction, holding them in registers
    ("l03_bank_conflicts.fast", "transpose_wide", F32_2D, "8-byte loads and stores"),
    ("l03_bank_conflicts.fast", "transpose_wide", None, "in registers"),
    ("l03_bank_conflicts.fast", "copy_wide", F32_2D, "8-byte loads and stores"),
    (
        "l03_bank_conflicts.fast",
        "transpose_wide_8x8_4x2_vec2_pad1",
        "void(float64[:, ::1], float64[:, ::1], int64)",
        "16-byte loads and stores",
    ),
    (
        "l03_bank_conflicts.fast",
        "transpose_wide_8x8_2x2_vec4_pad1",
        F32_2D,
        "16-byte loads and stores",
    ),
    # lesson 04: a lookup table in constant memory; the filters compiled in as module constants
    # have their weights written into the multiply-adds; a filter passed as an array is loaded
    ("l04_constant_memory.textbook", "tone_curve_constant", None, "a .const table"),
    ("l04_constant_memory.textbook", "gaussian5_constant", None, "a .const table"),
    ("l04_constant_memory.textbook", "laplacian_constant", None, "weights in the instructions"),
    ("l04_constant_memory.textbook", "box_blur_constant", None, "weights in the instructions"),
    ("l04_constant_memory.fast", "filter_tiled", None, "weights in the instructions"),
    ("l04_constant_memory.fast", "filter_tiled", None, "in registers"),
    # the read-only ceiling (timing.read_ceiling) reads every 16-byte word in one load
    ("device.stream", "read_every_word", None, "16-byte loads"),
    # lesson 05: the tuned sum reads 16 bytes per load (through the read-only path)
    ("l05_atomics_vs_reduction.fast", "sum_grid_stride_tuned", None, "16-byte loads"),
]
CLAIMED = sorted({f"{LESSONS}{module}.{kernel}" for module, kernel, _, _ in LESSON_CLAIMS})


@pytest.fixture(scope="module")
def package_report(cuda_compiler):
    report = ptx.run(archs=PACKAGE_ARCHS, every_arch_for=CLAIMED)
    print(report["output"].strip().splitlines()[-1])  # the summary: counts and times
    return report


@pytest.fixture(scope="module")
def samples_report(cuda_compiler):
    return ptx.run(SAMPLES, pythonpath=[TESTS])


def results_of(report, module, kernel, signature=None):
    found = [
        r
        for r in report["results"]
        if r["module"] == module and r["kernel"] == kernel and signature in (None, r["signature"])
    ]
    assert found, (
        f"{module}.{kernel} {signature or ''} was not compiled: renamed, or missing "
        "from its module's SIGNATURES? (update LESSON_CLAIMS in tests/test_ptx.py)"
    )
    return found


def claim_problems(results, claim):
    """Each configuration and architecture whose PTX does not show the claim, in one line."""
    return [
        f"{r['module']}.{r['kernel']} {r['signature']} on {arch}: {problem}"
        for r in results
        for arch, facts in r["ptx"].items()
        if (problem := ptx.claim_problem(facts, claim))
    ]


# ---- the package -----------------------------------------------------------------------------


def test_every_kernel_is_registered():
    """A module-level kernel missing from its module's SIGNATURES fails here (no NVVM needed)."""
    entries, problems = ptx.registry()
    assert entries, "no module of gpgpu_lessons registers a kernel in SIGNATURES"
    assert not problems, "\n".join(problems)


def test_every_kernel_compiles_and_the_claimed_ones_for_every_architecture(package_report):
    """Every configuration for PACKAGE_ARCHS with ptxas; LESSON_CLAIMS' kernels for all four."""
    assert package_report["archs"] == list(PACKAGE_ARCHS)
    assert package_report["configurations"] > 0
    assert not ptx.failures(package_report), "\n".join(ptx.failures(package_report))
    assert package_report["ptxas_archs"] == list(ptx.PTXAS_ARCHITECTURES)
    archs_of = {
        (r["module"], r["kernel"], r["signature"]): list(r["ptx"])
        for r in package_report["results"]
    }
    everywhere = list(ptx.ARCHITECTURES)
    wrong = [
        f"{module}.{kernel} {signature}: {archs}"
        for (module, kernel, signature), archs in archs_of.items()
        if archs != (everywhere if f"{module}.{kernel}" in CLAIMED else list(PACKAGE_ARCHS))
    ]
    assert not wrong, "compiled for the wrong architectures:\n" + "\n".join(wrong)
    unassembled = [
        f"{r['module']}.{r['kernel']} {r['signature']}"
        for r in package_report["results"]
        if "ptxas" not in r["ptx"][PACKAGE_ARCHS[0]]
    ]
    assert not unassembled, "not assembled by ptxas:\n" + "\n".join(unassembled)


def test_every_kernel_fits_the_static_shared_memory_of_a_block(package_report):
    over = [
        f"{r['module']}.{r['kernel']} {r['signature']}: {facts['shared_bytes']} bytes"
        for r in package_report["results"]
        for facts in r["ptx"].values()
        if facts["shared_bytes"] > 48 * 1024
    ]
    assert not over, "more than 48 KiB of static shared memory per block:\n" + "\n".join(over)


@pytest.mark.parametrize(
    "module, kernel, signature, claim",
    LESSON_CLAIMS,
    ids=[f"{k}-{c}" + ("" if s is None else f"-{s}") for _, k, s, c in LESSON_CLAIMS],
)
def test_what_the_lessons_claim_about_the_ptx(package_report, module, kernel, signature, claim):
    results = results_of(package_report, LESSONS + module, kernel, signature)
    problems = claim_problems(results, claim)
    assert not problems, f"claimed '{claim}':\n" + "\n".join(problems)


# ---- the loop, on kernels of known PTX -------------------------------------------------------

CLEAN, BROKEN = (f"{package}.kernels" for package in SAMPLES)


def test_the_clean_samples_compile_with_their_shared_memory(samples_report):
    clean = [r for r in samples_report["results"] if r["module"] == CLEAN]
    assert len(clean) == 11 and not [r for r in clean if r["error"]], ptx.describe(samples_report)
    assert {r["kernel"] for r in clean} >= {
        "scale_by_2",
        "scale_by_3",
        "squares",
    }  # factories, device functions
    assert samples_report["ptxas_archs"] == list(ptx.PTXAS_ARCHITECTURES)
    padded = results_of(samples_report, CLEAN, "transpose_padded")[0]["ptx"]
    assert all(facts["shared_bytes"] == 32 * 33 * 4 for facts in padded.values())
    assert all(
        padded[arch]["ptxas"]["shared_bytes"] == 32 * 33 * 4 for arch in ptx.PTXAS_ARCHITECTURES
    )


@pytest.mark.parametrize(
    "kernel, claim",
    [
        ("copy_vector4", "16-byte loads and stores"),
        ("lookup", "a .const table"),
        ("blur3", "no .const table"),
        ("blur3", "weights in the instructions"),
        ("reverse_held", "in registers"),
    ],
)
def test_each_claim_holds_where_it_should(samples_report, kernel, claim):
    assert not claim_problems(results_of(samples_report, CLEAN, kernel), claim)


@pytest.mark.parametrize(
    "kernel, claim, shown",
    [
        ("pick_held", "in registers", "16 bytes declared .local"),
        ("transpose_padded", "16-byte loads and stores", "no 16-byte global load or store"),
        ("blur3", "a .const table", "no .const array"),
        ("lookup", "no .const table", "_cudapy_cmem"),
        ("squares", "weights in the instructions", "no multiply-add with an immediate"),
        ("copy_vector4", "8-byte loads and stores", "ld.global.v4.f32"),
    ],
)
def test_each_claim_fails_where_it_should_naming_the_kernel(samples_report, kernel, claim, shown):
    problems = claim_problems(results_of(samples_report, CLEAN, kernel), claim)
    assert len(problems) >= len(ptx.ARCHITECTURES)
    assert all(f"{CLEAN}.{kernel} " in p and shown in p for p in problems), problems


BROKEN_KERNELS = [
    # a vector intrinsic of a wrong LLVM type
    ("wrong_intrinsic_type", "cannot store <4 x float> to float*"),
    # more than 48 KiB of static shared memory
    ("too_much_shared", "52000 bytes of static shared memory"),
    # a Python feature the simulator accepts and Numba's CUDA target does not
    ("allocates_an_array", "<built-in function zeros>"),
    # a kernel its module did not register
    ("unregistered", "missing from ptx_samples.broken.kernels.SIGNATURES"),
]


@pytest.mark.parametrize("kernel, reason", BROKEN_KERNELS)
def test_broken_kernels_fail_each_naming_itself(samples_report, kernel, reason):
    assert samples_report["returncode"] == 1
    failures = [line for line in ptx.failures(samples_report) if f"{BROKEN}.{kernel}" in line]
    assert len(failures) == 1 and reason in failures[0], ptx.failures(samples_report)


def test_numpy_2_5_breaking_numba_cuda_fails_naming_every_kernel(cuda_compiler):
    """NumPy 2.5 removed np.row_stack, which numba-cuda 0.30 registers at its first compilation."""
    remove_row_stack = (
        "import sys, runpy, numpy; del numpy.row_stack; sys.argv[0] = 'ptx'; "
        "runpy.run_module('gpgpu_tools.ptx', run_name='__main__')"
    )
    report = ptx.run(
        SAMPLES[:1],
        ("sm_75",),
        command=[sys.executable, "-c", remove_row_stack],
        pythonpath=[TESTS],
    )
    failures = ptx.failures(report)
    assert report["returncode"] == 1 and len(failures) == 11, report["output"]
    assert all(f.startswith(CLEAN) and "has no attribute 'row_stack'" in f for f in failures)


def test_every_arch_for_names_a_kernel_or_a_module_above_it():
    entry = ptx.Entry("gpgpu_lessons.l01_coalescing.fast", "copy_vectors", None, [])
    assert ptx.named(entry, ["gpgpu_lessons.l01_coalescing.fast.copy_vectors"])
    assert ptx.named(
        entry, ["gpgpu_lessons.l05_atomics_vs_reduction", "gpgpu_lessons.l01_coalescing"]
    )
    assert not ptx.named(entry, ["gpgpu_lessons.l01_coalescing.fast.copy"])
    assert not ptx.named(entry, ["gpgpu_lessons.l01"])
    assert not ptx.named(entry, [])


# ---- reading PTX text (no compiler needed) ---------------------------------------------------

PTX_TEXT = """
.visible .shared .align 4 .b8 _cudapy_smem_8[4224];
.extern .shared .align 16 .b8 _cudapy_dynshared[];
.const .align 4 .b8 _cudapy_cmem[1024] = {0, 0, 128, 63};
.visible .entry kernel(
	.local .align 16 .b8 	__local_depot0[16];
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd1];
	@%p1 ld.global.nc.v4.u32 	{%r1, %r2, %r3, %r4}, [%rd2];
	@!%p2 st.global.v2.f64 	[%rd3], {%fd1, %fd2};
	ld.const.f32 	%f5, [%rd4];
	st.local.f32 	[%rd5], %f5;
	st.global.u8 	[%rd6], %rs1;
	fma.rn.f32 	%f6, %f5, 0f3E800000, %f4;
	fma.rn.f32 	%f7, %f6, %f5, 0f3F800000;
"""


def test_ptx_text_helpers():
    assert (
        ptxfacts.access_bytes("ld.global.nc.v4.u32")
        == ptxfacts.access_bytes("st.global.v2.f64")
        == 16
    )
    assert ptxfacts.access_bytes("st.global.u8") == 1
    assert ptxfacts.wide_accesses(PTX_TEXT) == {
        "ld.global.v4.f32",
        "ld.global.nc.v4.u32",
        "st.global.v2.f64",
    }
    assert ptxfacts.memory_instructions(PTX_TEXT)["st.local.f32"] == 1
    assert ptxfacts.const_arrays(PTX_TEXT) == [("_cudapy_cmem", 1024)]
    assert ptxfacts.static_shared_bytes(PTX_TEXT) == 4224  # the dynamic array counts 0
    assert ptxfacts.local_bytes(PTX_TEXT) == 16
    assert ptxfacts.immediate_fmas(PTX_TEXT) == 1  # an immediate addend is no weight
    facts = ptxfacts.summary(PTX_TEXT)
    assert ptx.claim_problem(facts, "16-byte loads and stores") is None
    assert ptx.claim_problem(facts, "a .const table") is None
    assert "16 bytes declared .local" in ptx.claim_problem(facts, "in registers")
    assert ptx.claim_problem(facts, "2 loads before the first store") is None
    assert "2 global loads before" in ptx.claim_problem(facts, "3 loads before the first store")
    with pytest.raises(ValueError, match="unknown claim"):
        ptx.claim_problem(facts, "fast")
