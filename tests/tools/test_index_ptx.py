"""The PTX facts lesson 03 shows: read from PTX text; the recorded ones are what Numba emits."""

from __future__ import annotations

import json
import shutil

import pytest
from gpgpu_tools import ptx
from gpgpu_tools.cuda_c import index_ptx

from gpgpu_lessons import results

SAMPLE = """
.visible .entry k(
{
\tmin.s64 \t%rd5, %rd4, %rd3;
\tshr.s64 \t%rd6, %rd5, 63;
\tst.shared.f32 \t[%rd9], %f1;
$L__BB0_2:
\tand.b64  \t%rd7, %rd2, -9223372036854775808;
\tld.global.f32 \t%f2, [%rd8];
\tst.shared.f32 \t[%rd9+4], %f2;
\tret;
}
"""


def test_facts_count_instructions_wraparounds_and_the_second_row():
    facts = index_ptx.facts(SAMPLE)
    assert facts["instructions"] == 7
    assert facts["wraparounds"] == 2
    assert facts["second_row"] == [
        "and.b64 %rd7, %rd2, -9223372036854775808;",
        "ld.global.f32 %f2, [%rd8];",
        "st.shared.f32 [%rd9+4], %f2;",
    ]


@pytest.mark.ptx
def test_the_recorded_facts_are_what_this_numba_emits(tmp_path):
    if (why := ptx.missing_compiler()) is not None:
        pytest.skip(why)
    path = results.RECORDED_DIR / "yardstick" / "nvidia-h200.json"
    recorded = json.loads(path.read_text())["ptx"]
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    assert index_ptx.main(["--into", str(copy), "--cc", recorded["cc"]]) == 0
    fresh = json.loads(copy.read_text())["ptx"]
    if fresh["numba_cuda"] != recorded["numba_cuda"]:
        pytest.skip(f"recorded with numba-cuda {recorded['numba_cuda']}, not {fresh['numba_cuda']}")
    assert fresh == recorded, "run python -m gpgpu_tools.cuda_c.index_ptx --into " + str(path)
