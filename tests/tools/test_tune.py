"""The tuning tool: it finds every fast module's TUNING, whose chosen constants lie in its space."""

import json

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


def test_list_counts_every_combination(capsys):
    assert tune.main(["--list"]) == 0
    total = sum(len(tune.combinations(t["space"])) for t in FAMILIES.values())
    assert f"{total} combinations in all" in capsys.readouterr().out


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator's refusal")
def test_tuning_every_family_refuses_the_simulator(capsys):
    assert tune.main(["--all"]) == 2
    assert "measures a GPU" in capsys.readouterr().err


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_a_committed_tuning_record_of_its_space(family):
    """The record the constants cite exists and searched today's space.

    Fails until a GPU run of `python -m gpgpu_tools.tune --all` is committed (its files land in
    gpgpu_lessons/recorded/tuning/), and again when a module's space changes without re-tuning.
    """
    found = tune.recorded(family)
    assert found, (
        f"no gpgpu_lessons/recorded/tuning/{family}-<gpu>.json: run "
        f"`python -m gpgpu_tools.tune {family}` (or --all) on a GPU and commit the file"
    )
    space = json.loads(json.dumps(FAMILIES[family]["space"]))  # tuples as JSON stores them
    for table in found:
        assert table["family"] == family and table["results"], table["gpu"]
        assert table.get("space") == space, (
            f"{family}: the record of {table['gpu']} searched another space; tune it again"
        )
