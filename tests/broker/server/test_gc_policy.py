"""The broker process's garbage-collector policy: chosen by ``SPATE_GC``, applied once the broker has started."""

from __future__ import annotations

import gc

import pytest

from broker_core.server.gc_policy import SERVER_THRESHOLDS, GcPolicy, GcPolicyError, policy_from_env


@pytest.mark.parametrize("environ", [{}, {"SPATE_GC": ""}, {"SPATE_GC": "server"}, {"SPATE_GC": " server "}])
def test_the_server_policy_is_the_default(environ):
    policy = policy_from_env(environ)
    assert policy == GcPolicy(SERVER_THRESHOLDS)
    assert policy.name == "server"


def test_python_leaves_the_interpreter_as_it_is():
    policy = policy_from_env({"SPATE_GC": "python"})
    assert policy.thresholds is None and policy.name == "python"


def test_three_thresholds_are_taken_as_they_are():
    policy = policy_from_env({"SPATE_GC": "20000,20,0"})
    assert policy.thresholds == (20_000, 20, 0)
    assert policy.name == "20000,20,0"


@pytest.mark.parametrize("value", ["fast", "5000,10", "5000,10,10,10", "a,b,c", "0,10,10", "5000,-1,10", "5000;10;10"])
def test_anything_else_is_refused_naming_the_variable_and_what_it_takes(value):
    with pytest.raises(GcPolicyError) as refused:
        policy_from_env({"SPATE_GC": value})
    assert f"SPATE_GC={value!r}" in str(refused.value)
    assert "'server', 'python' or three thresholds" in str(refused.value)


@pytest.fixture
def collector_restored():
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def collected_generations() -> set[int]:
    return {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}


def test_applying_the_server_policy_freezes_what_is_alive_and_sets_the_thresholds(collector_restored):
    alive = [[n] for n in range(10)]
    assert id(alive) in collected_generations()
    assert GcPolicy((12_345, 11, 12)).apply() > 0
    assert id(alive) not in collected_generations()  # in the permanent generation: never walked again
    assert gc.get_threshold() == (12_345, 11, 12)


def test_applying_python_changes_nothing(collector_restored):
    before = gc.get_threshold(), gc.get_freeze_count()
    assert GcPolicy(None).apply() == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
