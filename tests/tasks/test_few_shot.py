"""Few-shot selection: reproducible, never the case itself, balanced and per-class as asked."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Case, CaseSpec
from pytest_llmjudge.suite.task_spec import FewShotSpec
from pytest_llmjudge.tasks.few_shot import (
    Example,
    FewShotConfig,
    FewShotError,
    example_pool,
    select_examples,
)


def make_case(case_id: str, **fields: object) -> Case:
    return Case(CaseSpec.model_validate({"id": case_id, **fields}), Location("b.yaml", 1, 1))


# 12 labelled cases: 8 'pass', 4 'fail'; and one case without ground truth.
CASES = (
    *(make_case(f"p{i}", source_narrative=f"narrative p{i}", ground_truth="pass") for i in range(8)),
    *(make_case(f"f{i}", source_narrative=f"narrative f{i}", ground_truth="fail") for i in range(4)),
    make_case("open", source_narrative="no answer yet"),
)
POOL = example_pool("B1", CASES)


def ids(examples: tuple[Example, ...]) -> list[str]:
    return [example.id for example in examples]


def config(**values: object) -> FewShotConfig:
    return FewShotConfig.from_spec(FewShotSpec.model_validate(values))


# -- the pool ----------------------------------------------------------------------------------------


def test_the_pool_is_the_labelled_cases_without_their_ground_truth() -> None:
    assert ids(POOL) == [*(f"p{i}" for i in range(8)), *(f"f{i}" for i in range(4))]
    first = POOL[0]
    assert first.output == "pass" and first.label == "pass"
    assert first.fields == {"id": "p0", "benchmark": "B1", "source_narrative": "narrative p0", "inputs": {}}


@pytest.mark.parametrize(
    ("fields", "label"),
    [
        ({"ground_truth": "fail"}, "fail"),
        ({"ground_truth": True}, "true"),
        ({"ground_truth": 3}, "3"),
        ({"ground_truth": {"complaint": "fall"}, "label": "pass"}, "pass"),
        ({"ground_truth": ["a"]}, ""),
    ],
)
def test_an_examples_class_is_its_plain_ground_truth_else_its_label(
    fields: dict[str, object], label: str
) -> None:
    (example,) = example_pool("B1", [make_case("c", **fields)])
    assert example.label == label
    assert example.output == fields["ground_truth"]


def test_examples_are_hashable_even_with_structured_outputs() -> None:
    (example,) = example_pool("B1", [make_case("c", ground_truth={"a": [1]}, inputs={"x": {"y": 1}})])
    assert len({example, example}) == 1


# -- the config --------------------------------------------------------------------------------------


def test_config_mirrors_the_spec_and_is_hashable() -> None:
    counts = config(compose={"pass": 2, "fail": 1}, example_order="as_listed", seed=7)
    assert counts == FewShotConfig(0, (("fail", 1), ("pass", 2)), "as_listed", False, 7)
    assert counts.shots == 3
    assert hash(counts) == hash(config(compose={"fail": 1, "pass": 2}, example_order="as_listed", seed=7))


def test_the_fingerprint_is_stable_and_follows_every_setting() -> None:
    base = config(n_shots=2)
    assert base.fingerprint() == config(n_shots=2).fingerprint()
    assert len(base.fingerprint()) == 16
    variants = [
        config(n_shots=3),
        config(n_shots=2, compose="balanced"),
        config(n_shots=2, example_order="as_listed"),
        config(n_shots=2, reuse_examples=True),
        config(n_shots=2, seed=43),
    ]
    assert len({base.fingerprint(), *(v.fingerprint() for v in variants)}) == 6


def test_per_class_counts_that_disagree_with_n_shots_are_refused() -> None:
    with pytest.raises(FewShotError, match="n_shots is 4 but the per-class counts of compose add up to 3"):
        config(n_shots=4, compose={"pass": 2, "fail": 1})
    assert config(n_shots=3, compose={"pass": 2, "fail": 1}).shots == 3


# -- selection ---------------------------------------------------------------------------------------


def test_no_shots_no_examples() -> None:
    assert select_examples(config(n_shots=0), POOL, "p0") == ()


def test_selection_is_deterministic_per_seed_and_case() -> None:
    random3 = config(n_shots=3)
    draw = select_examples(random3, POOL, "open")
    assert select_examples(random3, POOL, "open") == draw
    assert len(set(ids(draw))) == 3
    per_case = {tuple(ids(select_examples(random3, POOL, f"c{i}"))) for i in range(20)}
    assert len(per_case) > 10, "each case draws its own examples"
    per_seed = {tuple(ids(select_examples(config(n_shots=3, seed=s), POOL, "open"))) for s in range(20)}
    assert len(per_seed) > 10, "the seed changes the draw"


def test_selection_is_the_same_in_another_process() -> None:
    """String seeds, not hash(): PYTHONHASHSEED does not change a draw."""
    script = (
        "from tests.tasks.test_few_shot import POOL, config, ids, select_examples;"
        "print(ids(select_examples(config(n_shots=4, compose='balanced'), POOL, 'p3')))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
            cwd=Path(__file__).resolve().parents[2],
        ).stdout
        for seed in ("1", "2")
    }
    here = str(ids(select_examples(config(n_shots=4, compose="balanced"), POOL, "p3")))
    assert outputs == {here + "\n"}


def test_a_case_is_never_its_own_example() -> None:
    every = config(n_shots=11)  # all 11 others: the case itself is the only one left out
    for example in POOL:
        chosen = select_examples(every, POOL, example.id)
        assert example.id not in ids(chosen)
        assert len(chosen) == 11


def test_too_small_a_pool_is_an_error() -> None:
    with pytest.raises(FewShotError, match=r"asks for 13 examples but the pool has 12 \(examples are cases"):
        select_examples(config(n_shots=13), POOL, "open")
    with pytest.raises(FewShotError, match="asks for 12 examples but the pool has 11 besides case 'p0'"):
        select_examples(config(n_shots=12), POOL, "p0")
    assert len(select_examples(config(n_shots=12), POOL, "open")) == 12


def test_balanced_takes_classes_in_turn() -> None:
    for case_id in ("open", "p0", "f0"):
        chosen = select_examples(config(n_shots=4, compose="balanced"), POOL, case_id)
        assert Counter(e.label for e in chosen) == {"pass": 2, "fail": 2}
    odd = select_examples(config(n_shots=5, compose="balanced", example_order="as_listed"), POOL, "open")
    assert Counter(e.label for e in odd) == {"fail": 3, "pass": 2}  # classes sorted: 'fail' first
    # 'fail' runs out after 4 (3 besides f0): the rest come from 'pass'
    uneven = select_examples(config(n_shots=9, compose="balanced"), POOL, "f0")
    assert Counter(e.label for e in uneven) == {"fail": 3, "pass": 6}


def test_per_class_counts_take_that_many_of_each() -> None:
    chosen = select_examples(config(compose={"pass": 1, "fail": 3}), POOL, "f1")
    assert Counter(e.label for e in chosen) == {"pass": 1, "fail": 3}
    assert "f1" not in ids(chosen)


def test_a_class_with_too_few_examples_is_an_error() -> None:
    with pytest.raises(FewShotError) as caught:
        select_examples(config(compose={"fail": 4}), POOL, "f2")
    assert str(caught.value) == (
        "few_shot asks for 4 'fail' examples but the pool has 3 besides case 'f2'; "
        "classes in the pool: 'fail' (3), 'pass' (8)"
    )
    with pytest.raises(FewShotError, match="asks for 1 'maybe' example but the pool has 0"):
        select_examples(config(compose={"maybe": 1}), POOL, "open")
    assert len(select_examples(config(compose={"fail": 4}), POOL, "open")) == 4


def test_as_listed_keeps_the_pool_order_and_random_shuffles() -> None:
    position = {e.id: i for i, e in enumerate(POOL)}
    listed = [select_examples(config(n_shots=6, example_order="as_listed"), POOL, f"c{i}") for i in range(10)]
    assert all(ids(d) == sorted(ids(d), key=position.__getitem__) for d in listed)
    shuffled = [select_examples(config(n_shots=6), POOL, f"c{i}") for i in range(10)]
    assert any(ids(d) != sorted(ids(d), key=position.__getitem__) for d in shuffled)


def test_reused_examples_are_the_same_for_every_case_outside_the_draw() -> None:
    reuse = config(n_shots=3, reuse_examples=True)
    shared = select_examples(reuse, POOL, "open")
    outside = [e.id for e in POOL if e.id not in ids(shared)]
    assert all(select_examples(reuse, POOL, case_id) == shared for case_id in outside)


@pytest.mark.parametrize(
    "settings",
    [
        {"n_shots": 3},
        {"n_shots": 3, "example_order": "as_listed"},
        {"n_shots": 4, "compose": "balanced"},
        {"compose": {"pass": 2, "fail": 1}},
    ],
    ids=["random", "as-listed", "balanced", "per-class"],
)
def test_a_case_in_the_shared_draw_gets_the_next_candidate_in_its_place(settings: dict[str, object]) -> None:
    reuse = config(**settings, reuse_examples=True)
    shared = ids(select_examples(reuse, POOL, "open"))
    position_in_pool = {e.id: i for i, e in enumerate(POOL)}
    for member in shared:
        own = ids(select_examples(reuse, POOL, member))
        (replacement,) = set(own) - set(shared)
        assert set(shared) - set(own) == {member}
        if settings.get("compose") not in (None, "random"):
            assert replacement[0] == member[0], "a candidate of the same class"
        if settings.get("example_order") == "as_listed":
            assert own == sorted(own, key=position_in_pool.__getitem__)
        else:
            assert own == [replacement if x == member else x for x in shared]
