"""The tracer against the GPU's own tools: the Nsight Compute counters and compute-sanitizer
verdicts recorded on a GPU (python -m gpgpu_tools.trace_verify ncu / races) for the small
kernels of gpgpu_tools.trace_cases, compared with what the tracer counts here and now."""

import functools
import json
from collections import defaultdict

import pytest
from gpgpu_tools import trace_cases as cases
from gpgpu_tools import trace_verify as verify

from gpgpu_lessons import results

RECORDS = sorted((results.RECORDED_DIR / "trace").glob("*.json"))

# Where the compiler, not the memory pattern, decides: the tracer counts what the source asks
# for; these are the (case, metric) pairs where the compiled kernel does something else.
COMPILER_DECIDES = {
    (
        "verify_matmul_tiled",
        "smsp__inst_executed_op_shared_ld.sum",
    ): "the compiler merges neighbouring shared loads of the unrolled inner loop into wide ones",
    (
        "verify_matmul_tiled",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ): "the same merged loads",
    (
        "verify_histogram",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    ): "shared atomics on one word: the hardware serialises them slightly better than one turn "
    "per lane (7% fewer wavefronts)",
    (
        "verify_local",
        "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    ): "the compiler keeps the small local array in registers: no local memory at all",
    ("verify_local", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"): "the same",
    ("verify_local", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"): "the same",
    ("verify_local", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"): "the same",
}


def record(path):
    return json.loads(path.read_text())


@functools.cache
def traced(kind: str, name: str) -> dict:
    """What the tracer finds for the case `name` of cases.COUNTS or cases.RACES (`kind`): traced
    once, then compared with every GPU's record (the cases and their seeded inputs are the same)."""
    (case,) = (case for case in getattr(cases, kind) if case.name == name)
    return verify.tracer_counts(case)


@pytest.mark.skipif(not RECORDS, reason="no recorded GPU verification")
@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_the_tracer_counts_what_nsight_compute_measured(path):
    measured = defaultdict(dict)
    for row in record(path)["ncu"]:
        measured[row["case"]][row["metric"]] = (row["space"], row["op"], row["ncu"])
    wrong = []
    for name, metrics in measured.items():
        found = traced("COUNTS", name)["counts"]
        for metric, (space, op, theirs) in metrics.items():
            entry = found.get((space, op), {"requests": 0, "cost": 0})
            ours = (
                entry["requests"]
                if "requests" in metric or "inst_executed" in metric
                else entry["cost"]
            )
            agree = ours == theirs or (ours and abs(theirs / ours - 1) <= verify.TOLERANCE)
            if not agree and (name, metric) not in COMPILER_DECIDES:
                wrong.append(f"{name} {metric}: tracer {ours}, Nsight Compute {theirs:.0f}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.skipif(not RECORDS, reason="no recorded GPU verification")
@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_the_tracer_flags_the_kernels_racecheck_flagged(path):
    for row in record(path)["races"]:
        ours = traced("RACES", row["case"])["hazards"]
        our_kinds = {kind for kind, _ in ours}
        assert bool(our_kinds - {"barrier"}) == bool(row["racecheck"]), row["case"]
        our_lines = {n for _, found in ours for n in found}
        assert set(row["racecheck_lines"]) <= our_lines, (row["case"], row["racecheck_lines"])
