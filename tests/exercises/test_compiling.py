"""What passes compiles on a GPU: a cell's kernels compiled to PTX in a child process, each
problem a GPU's compiler finds said in one sentence with the cell's line (`compiling`).

The tests marked ptx need the CUDA compiler wheels (pip install -e ".[cu12]"): without them they
skip (the `cuda_compiler` fixture of tests/conftest.py), except under `make test CUDA=cu12`
(GPGPU_LESSONS_REQUIRE_PTX=1), where a missing compiler fails. The others need no compiler:
argument types, the sentences made from numba's messages, and the simulator's refusal of a bool
given to `cuda.syncthreads_count` (the verdict a student without the wheels gets).
"""

import subprocess

import numpy as np
import pytest
from numba import cuda, int32

from gpgpu_lessons import runtime
from gpgpu_lessons.exercises import compiling

CELL = "<exercise cell>"

SOURCE = """\
import numpy as np
from numba import cuda, float32, int32

SCALE = np.float32(2.0)


def helper(x):
    return x * 2


@cuda.jit(device=True)
def twice(x):
    return x * SCALE


@cuda.jit
def scale(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = twice(a[i])


@cuda.jit
def calls_helper(a, out):
    i = cuda.grid(1)
    out[i] = helper(a[i])


@cuda.jit
def counts_bool(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_count(a[i] > 0)


@cuda.jit
def ors_bool(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_or(a[i] > 0)


@cuda.jit
def ands_bool(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_and(a[i] > 0)


@cuda.jit
def counts_int32(a, out):
    i = cuda.grid(1)
    out[i] = cuda.syncthreads_count(int32(a[i] > 0))


@cuda.jit
def builds_list(a, out):
    i = cuda.grid(1)
    near = [a[i], a[i]]
    out[i] = near[0]


@cuda.jit
def adds_to_array(a, out):
    i = cuda.grid(1)
    out[i] = a + 1.0


@cuda.jit
def size_of(a, out):
    out[0] = a.size


@cuda.jit
def truthy(x, out):
    if x:
        out[0] = 1


scale[1, 32](np.zeros(4, np.float32), np.zeros(4, np.float32))
"""

VECTORS = compiling.argument_types([np.zeros(4, np.float32), np.zeros(4, np.float32)])


def line_of(text: str, source: str = SOURCE) -> int:
    """The line of the source that holds the text (once)."""
    found = [n for n, line in enumerate(source.splitlines(), 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


FIX_HELPER = (
    "calls `helper`, a plain Python function: a GPU kernel can only call device functions "
    f"(`@cuda.jit(device=True)` above `def helper` on line {line_of('def helper')})"
)
LIST = (
    "builds a Python list; a kernel has no lists: use `cuda.local.array(N, float32)` "
    "(N a constant) or a tuple"
)


def predicate(function: str) -> str:
    return (
        f"passes a bool to `cuda.{function}`; on a GPU it takes an int32 predicate: "
        f"`cuda.{function}(int32(x > 0))` (`from numba import int32`)"
    )


# ---- argument types (numba's typeof, no compiler needed) -------------------------------------

CUBE = np.zeros((4, 5, 6), np.float32)


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.zeros(8, np.float32), "float32[::1]"),
        (np.zeros((4, 5), np.float32), "float32[:, ::1]"),
        (CUBE, "float32[:, :, ::1]"),
        (CUBE[:, :, ::2], "float32[:, :, :]"),
        (CUBE.T, "float32[::1, :, :]"),
        (np.zeros((3, 8), np.uint8), "uint8[:, ::1]"),
        (np.zeros((3, 8), np.uint8)[:, 1:], "uint8[:, :]"),
        (np.asfortranarray(np.zeros((3, 8), np.uint8)), "uint8[::1, :]"),
        (np.zeros(9, np.int32)[::3], "int32[:]"),
        (np.zeros((2, 3, 4), np.int32), "int32[:, :, ::1]"),
        (np.zeros(5, np.complex128), "complex128[::1]"),
        (np.zeros((6, 6), np.complex128)[::2, ::2], "complex128[:, :]"),
        (np.zeros(3, np.bool_), "boolean[::1]"),
        (np.zeros((), np.float64), "Array(float64, 0, 'C')"),
        (np.float32(1.5), "float32"),
        (np.uint8(7), "uint8"),
        (np.int32(-3), "int32"),
        (np.complex128(1j), "complex128"),
        (3, "int64"),
        (2.5, "float64"),
        (True, "boolean"),
        (np.bool_(False), "boolean"),
    ],
)
def test_argument_types_are_those_of_a_launch(value, expected):
    assert compiling.argument_types([value]) == (expected,)


def test_argument_types_keep_the_order_and_a_read_only_array():
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    assert compiling.argument_types([frozen, 4, np.zeros((2, 2), np.float64)]) == (
        "Array(float32, 1, 'C', readonly=True)",
        "int64",
        "float64[:, ::1]",
    )
    assert compiling.argument_types([]) == ()


@pytest.mark.parametrize("value", ["text", [1.0, 2.0], np.zeros(3, [("x", "f4")]), object()])
def test_a_value_no_kernel_takes_is_refused_in_words(value):
    with pytest.raises(TypeError, match="cannot be passed to a kernel: pass NumPy arrays"):
        compiling.argument_types([value])


# ---- available() and SKIPPED (no compiler needed) --------------------------------------------


def test_available_is_a_bool_decided_without_a_process(monkeypatch):
    def no_process(*args, **kwargs):
        raise AssertionError("available() started a process")

    monkeypatch.setattr(subprocess, "run", no_process)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    compiling.available.cache_clear()
    try:
        found = compiling.available()
        assert isinstance(found, bool)
        assert compiling.available() is found
    finally:
        compiling.available.cache_clear()


def test_skipped_reads_as_one_plain_sentence():
    text = compiling.SKIPPED
    assert text.startswith("Not compiled for a GPU here: ") and text.endswith(".")
    assert text.count(". ") == 0 and "\n" not in text and len(text) < 120
    assert "CUDA compiler wheels" in text and "autograder" in text
    assert "/" not in text and "\\" not in text and "Error" not in text


# ---- sentences from numba's messages (no compiler needed) ------------------------------------

NO_LOCATION = """No implementation of function Function(<intrinsic syncthreads_count>) found \
for signature:

 >>> syncthreads_count(bool)

There are 2 candidate implementations:
 - Of which 2 did not match due to:
 Intrinsic of function 'syncthreads_count': File: numba/cuda/intrinsics.py: Line 177."""

UNTYPED = f"""Failed in cuda mode pipeline (step: nopython frontend)
Untyped global name 'helper': Cannot determine Numba type of <class 'function'>

File "{CELL}", line {line_of("= helper(a[i])")}:
def calls_helper(a, out):
    <source elided>
    out[i] = helper(a[i])
    ^

During: Pass nopython_type_inference"""

BUILT = line_of("near = [a[i], a[i]]")
LOWERING = f"""Failed in cuda mode pipeline (step: cuda native lowering)
NRT required but not enabled
During: lowering "near = build_list(items=[Var($1, {CELL}:{BUILT})])" at {CELL} ({BUILT})
During: Pass cuda_native_lowering"""

INTERNAL = """Failed in cuda mode pipeline (step: nopython frontend)
Cannot read /home/student/.venv/lib/python3.11/site-packages/numba/cuda/x.py: \
<numba.core.base.OverloadSelector object at 0x7f00deadbeef> gave up:"""


def test_sentences_name_the_line_from_the_message_or_the_compiler():
    helper_line = line_of("= helper(a[i])")
    assert compiling.explain(UNTYPED, CELL, SOURCE) == f"Line {helper_line} {FIX_HELPER}"
    assert compiling.explain(NO_LOCATION, CELL, SOURCE, 33) == (
        f"Line 33 {predicate('syncthreads_count')}"
    )
    assert compiling.explain(LOWERING, CELL, SOURCE) == f"Line {BUILT} {LIST}"


def test_other_messages_give_their_first_line_without_paths_or_addresses():
    sentence = compiling.explain(INTERNAL, CELL, SOURCE, 7)
    assert sentence == (
        "Line 7 does not compile for a GPU: Cannot read x.py: "
        "<numba.core.base.OverloadSelector> gave up"
    )
    nothing = compiling.explain("", CELL)
    assert nothing == "The kernel does not compile for a GPU: numba gave no reason"


# ---- the simulator refuses what the GPU's compiler refuses -----------------------------------


@cuda.jit
def votes_int32(a, out):
    i = cuda.threadIdx.x
    p = int32(a[i] > 0)
    out[0, i] = cuda.syncthreads_count(p)
    out[1, i] = cuda.syncthreads_and(p)
    out[2, i] = cuda.syncthreads_or(p)


@cuda.jit
def count_bool(a, out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.syncthreads_count(a[i] > 0)


@cuda.jit
def and_bool(a, out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.syncthreads_and(a[i] > 0)


@cuda.jit
def or_float(a, out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.syncthreads_or(a[i])


on_simulator = pytest.mark.skipif(
    runtime.MODE != runtime.SIMULATOR, reason="the simulator's check (a GPU compiles the kernel)"
)


@on_simulator
def test_the_simulator_votes_with_an_int32_predicate():
    out = np.zeros((3, 4), np.int32)
    votes_int32[1, 4](np.array([1, -1, 2, 0], np.float32), out)
    assert out.tolist() == [[2] * 4, [0] * 4, [1] * 4]


@on_simulator
@pytest.mark.parametrize(
    "kernel, function, given",
    [
        (count_bool, "syncthreads_count", "a bool"),
        (and_bool, "syncthreads_and", "a bool"),
        (or_float, "syncthreads_or", "a float32"),
    ],
)
def test_the_simulator_refuses_a_bool_predicate_naming_the_fix(kernel, function, given):
    with pytest.raises(TypeError) as error:
        kernel[1, 4](np.array([1, -1, 2, 0], np.float32), np.zeros((1, 4), np.int32))
    assert f"cuda.{function} takes an int32 predicate on a GPU, not {given}" in str(error.value)
    assert f"`cuda.{function}(int32(x > 0))`" in str(error.value)


# ---- compiled for a GPU ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def verdicts(cuda_compiler):
    arrays = [
        np.zeros(8, np.float32),
        np.zeros((4, 5), np.float32),
        CUBE,
        CUBE[:, ::2],
        np.zeros((3, 8), np.uint8).T,
        np.zeros(9, np.int32)[::3],
        np.zeros((2, 3, 4), np.int32),
        np.zeros((6, 6), np.complex128)[::2],
    ]
    scalars = [np.float32(1), np.uint8(1), np.int32(1), np.complex128(1), 3, 2.5, True]
    out = np.zeros(1, np.float64)
    kernels = {
        name: [VECTORS]
        for name in (
            "calls_helper",
            "counts_bool",
            "ors_bool",
            "ands_bool",
            "counts_int32",
            "builds_list",
            "adds_to_array",
        )
    }
    kernels["scale"] = [
        VECTORS,
        compiling.argument_types([np.zeros(9, np.float32)[::3], np.zeros(3, np.float32)]),
        compiling.argument_types([np.zeros(3, np.float64), np.zeros(3, np.float64)]),
        compiling.argument_types([np.zeros(3, np.complex128), np.zeros(3, np.complex128)]),
    ]
    kernels["size_of"] = [compiling.argument_types([a, out]) for a in arrays]
    kernels["truthy"] = [compiling.argument_types([x, out]) for x in scalars]
    return compiling.compile_problems(SOURCE, CELL, kernels)


@pytest.mark.ptx
def test_the_compiler_is_available_where_the_wheels_are(cuda_compiler):
    assert compiling.available() is True


@pytest.mark.ptx
def test_a_correct_kernel_compiles_for_every_argument_type(verdicts):
    assert verdicts["scale"] is None
    assert verdicts["counts_int32"] is None
    assert verdicts["size_of"] is None  # 1-D to 3-D, C and not contiguous, four dtypes
    assert verdicts["truthy"] is None  # NumPy scalars and Python numbers


@pytest.mark.ptx
def test_a_plain_python_helper_is_refused_with_its_line(verdicts):
    assert verdicts["calls_helper"] == f"Line {line_of('= helper(a[i])')} {FIX_HELPER}"


@pytest.mark.ptx
@pytest.mark.parametrize(
    "kernel, function",
    [
        ("counts_bool", "syncthreads_count"),
        ("ors_bool", "syncthreads_or"),
        ("ands_bool", "syncthreads_and"),
    ],
)
def test_a_bool_predicate_is_refused_with_its_line(verdicts, kernel, function):
    line = line_of(f"cuda.{function}(a[i] > 0)")
    assert verdicts[kernel] == f"Line {line} {predicate(function)}"


@pytest.mark.ptx
def test_a_python_list_is_refused_with_its_line(verdicts):
    assert verdicts["builds_list"] == f"Line {line_of('near = [a[i], a[i]]')} {LIST}"


@pytest.mark.ptx
def test_a_typing_error_gets_its_line_and_numbas_reason(verdicts):
    assert verdicts["adds_to_array"] == (
        f"Line {line_of('out[i] = a + 1.0')} does not compile for a GPU: Numba has no "
        "`x[i] = value` for the types (array(float32, 1d, C), int64, array(float64, 1d, C))"
    )


APPEND = """\
from numba import cuda


@cuda.jit
def gather(a, out):
    kept = []
    for j in range(4):
        kept.append(a[j])
    out[0] = kept[0]
"""


@pytest.mark.ptx
def test_a_list_used_later_is_refused_where_it_is_built(cuda_compiler):
    verdict = compiling.compile_problems(APPEND, CELL, {"gather": [VECTORS]})
    assert verdict == {"gather": f"Line {line_of('kept = []', APPEND)} {LIST}"}


TWO = """\
from numba import cuda


@cuda.jit
def halve(a, out):
    out[0] = a[0] / 2
"""


@pytest.mark.ptx
def test_a_failure_for_one_of_several_argument_types_names_them(cuda_compiler):
    complex_in = compiling.argument_types([np.zeros(2, np.complex128), np.zeros(2, np.float32)])
    verdict = compiling.compile_problems(TWO, CELL, {"halve": [VECTORS, complex_in]})
    assert verdict["halve"].startswith(f"Line {line_of('out[0] = a[0] / 2', TWO)} ")
    assert verdict["halve"].endswith("(with the arguments (complex128[::1], float32[::1]))")


CELL_PROBLEMS = {
    "syntax": ("from numba import cuda\n\n@cuda.jit\ndef k(a)\n    a[0] = 1\n", "Line 4 is not"),
    "name": (
        "from numba import cuda\nN = M + 1\n",
        "Line 2 fails when the cell runs: NameError: name 'M' is not defined",
    ),
    "crash": (
        "import os\nfrom numba import cuda\nstopped = os._exit(3)\n",
        "`k` was not checked for a GPU: the compiler process stopped (exit status 3)",
    ),
    "plain": ("def k(a):\n    a[0] = 1\n", "`k` is not a kernel: put `@cuda.jit` above `def k`"),
    "device": (
        "from numba import cuda\n\n@cuda.jit(device=True)\ndef k(a):\n    return a\n",
        "`k` is a device function (`@cuda.jit(device=True)`), not a kernel",
    ),
    "missing": ("from numba import cuda\n", "`k` is not defined in the cell"),
}


@pytest.mark.ptx
@pytest.mark.parametrize("case", list(CELL_PROBLEMS))
def test_a_cell_that_does_not_define_a_kernel_gets_a_sentence(cuda_compiler, case):
    source, expected = CELL_PROBLEMS[case]
    verdict = compiling.compile_problems(source, CELL, {"k": [VECTORS]})["k"]
    assert verdict.startswith(expected)
    assert "Traceback" not in verdict and "site-packages" not in verdict


@pytest.mark.ptx
def test_a_cell_that_runs_too_long_is_stopped_in_a_sentence(cuda_compiler, monkeypatch):
    monkeypatch.setattr(compiling, "TIME_LIMIT_S", 3)
    source = "from numba import cuda\nwhile True:\n    pass\n"
    verdict = compiling.compile_problems(source, CELL, {"k": [VECTORS]})
    assert verdict == {
        "k": "`k` was not checked for a GPU: compiling the cell took more than 3 s (does the "
        "cell run a long loop outside the kernels?)"
    }


@pytest.mark.ptx
def test_cells_compiled_together_lose_only_their_own_kernels(cuda_compiler):
    crash, _ = CELL_PROBLEMS["crash"]
    cells = [(TWO, "<cell 1>", {"halve": [VECTORS]}), (crash, "<cell 2>", {"k": [VECTORS]})]
    cells.append((TWO, "<cell 3>", {"halve": [VECTORS]}))
    first, stopped, third = compiling.compile_cells(cells)
    assert first == {"halve": None} and third == {"halve": None}
    assert stopped["k"].startswith("`k` was not checked for a GPU: the compiler process stopped")
