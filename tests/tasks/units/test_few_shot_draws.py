"""Few-shot draws as a user sees them: the pool's examples carry the benchmark's fields but never
a ground truth, the seed decides the draw, and ``random`` draws from the whole pool."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Case, CaseSpec
from pytest_llmjudge.tasks.few_shot import FewShotConfig, FewShotError, example_pool, select_examples


def make_case(case_id: str, **fields: object) -> Case:
    return Case(CaseSpec.model_validate({"id": case_id, **fields}), Location("b.yaml", 1, 1))


def cases() -> tuple[Case, ...]:
    return (
        *(make_case(f"p{i}", source_narrative=f"n{i}", ground_truth="pass") for i in range(8)),
        *(make_case(f"f{i}", source_narrative=f"m{i}", ground_truth="fail") for i in range(4)),
    )


def test_an_example_has_the_benchmarks_fields_and_not_its_ground_truth() -> None:
    (example, *_) = example_pool("B7", cases())
    assert example.fields == {"id": "p0", "benchmark": "B7", "source_narrative": "n0", "inputs": {}}
    assert example.output == "pass"


def test_a_shared_draw_follows_the_seed() -> None:
    pool = example_pool("B1", cases())
    draws = {
        tuple(
            e.id for e in select_examples(FewShotConfig(n_shots=3, reuse_examples=True, seed=seed), pool, "x")
        )
        for seed in range(5)
    }
    assert len(draws) > 1
    again = select_examples(FewShotConfig(n_shots=3, reuse_examples=True, seed=3), pool, "x")
    assert again == select_examples(FewShotConfig(n_shots=3, reuse_examples=True, seed=3), pool, "x")


def test_a_random_draw_is_not_balanced_by_class() -> None:
    pool = example_pool("B1", cases())
    counts = [
        Counter(e.label for e in select_examples(FewShotConfig(n_shots=4, seed=seed), pool, "x"))
        for seed in range(20)
    ]
    assert any(count["pass"] >= 3 for count in counts)  # balanced would always be two and two
    balanced = [
        Counter(
            e.label
            for e in select_examples(FewShotConfig(n_shots=4, compose="balanced", seed=seed), pool, "x")
        )
        for seed in range(20)
    ]
    assert all(count == {"pass": 2, "fail": 2} for count in balanced)


def test_asking_one_example_of_an_empty_pool_says_example_not_examples() -> None:
    with pytest.raises(FewShotError) as caught:
        select_examples(FewShotConfig(n_shots=1), (), "x")
    assert str(caught.value) == (
        "few_shot asks for 1 example but the pool has 0 (examples are cases with a ground_truth)"
    )
