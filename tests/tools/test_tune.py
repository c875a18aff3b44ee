"""The tuning tool: it finds every fast module's TUNING, whose chosen constants lie in its space."""

import pytest
from gpgpu_tools import tune

from gpgpu_lessons import launch, runtime

FAMILIES = tune.families()


def test_combinations_cover_the_product_in_order():
    assert tune.combinations({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]


def test_list_prints_every_family(capsys):
    assert tune.main(["--list"]) == 0
    printed = capsys.readouterr().out
    assert all(name in printed for name in FAMILIES)


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator's refusal")
def test_tuning_refuses_the_simulator(capsys):
    assert tune.main(["anything"]) == 2
    assert "measures a GPU" in capsys.readouterr().err


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_chosen_constants_are_in_the_space_and_build(family):
    """The constants in use lie in the searched space (which may add workload dimensions)."""
    tuning = FAMILIES[family]
    chosen, space = tuning["chosen"], tuning["space"]
    assert chosen and set(chosen) <= set(space), f"{family}: chosen names tuned parameters"
    for name, value in chosen.items():
        per_case = value.values() if isinstance(value, dict) else [value]  # a choice per workload
        assert all(v in space[name] for v in per_case), (
            f"{family}: chosen {name}={value} outside the space"
        )
    params = {
        name: values[0]
        if isinstance(chosen.get(name), dict) or name not in chosen
        else chosen[name]
        for name, values in space.items()
    }
    prepared, nbytes = tuning["case"](**params)
    assert isinstance(prepared, launch.Launch) and nbytes > 0
