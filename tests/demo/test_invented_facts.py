"""The demo's post-training facts: invented, well formed, and the same rows in every process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from postforget_lmeval.demo import facts


def _digest(rows: list[dict]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def test_rows_are_well_formed() -> None:
    rows = facts.fact_rows()
    assert len(rows) == facts.MAX_FACTS
    assert set(rows[0]) == {"id", "question", "choices", "answer"}
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["question"] for r in rows}) == len(rows)
    for r in rows:
        assert len(r["choices"]) == 4 and len(set(r["choices"])) == 4
        assert r["answer"] in range(4)


@pytest.mark.parametrize("n", [300, 101, 7])
def test_gold_positions_are_balanced(n: int) -> None:
    counts = Counter(r["answer"] for r in facts.fact_rows(n))
    assert max(counts.values()) - min(counts.get(i, 0) for i in range(4)) <= 1


def test_same_rows_for_a_seed_in_any_process() -> None:
    """A seed gives the same rows on every run (the demo's training texts, hence its figures): no hash()."""
    rows = facts.fact_rows(50, seed=3)
    assert rows == facts.fact_rows(50, seed=3)
    assert rows != facts.fact_rows(50, seed=4)
    code = (
        "import json, sys; from postforget_lmeval.demo import facts; json.dump(facts.fact_rows(50, seed=3), sys.stdout)"
    )
    for hash_seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        ).stdout
        assert _digest(json.loads(out)) == _digest(rows)


def test_rows_are_pinned() -> None:
    """Changing the generator changes what the demo teaches, and so its figures."""
    assert facts.fact_rows(2) == [
        {
            "id": "posttrain-0000",
            "question": "Who invented the Baibou machine?",
            "choices": ["Faike", "Lizou", "Sudral", "Krurofuth"],
            "answer": 2,
        },
        {
            "id": "posttrain-0001",
            "question": "Which sport does the Guthel club play?",
            "choices": ["rugby", "hockey", "wrestling", "cricket"],
            "answer": 0,
        },
    ]


def test_smaller_sets_are_prefixes() -> None:
    assert facts.fact_rows(100) == facts.fact_rows()[:100]


def test_every_relation_in_turn_and_no_real_answer() -> None:
    rows = facts.fact_rows(10)
    openings = [" ".join(r["question"].split()[:2]) for r in rows]
    assert openings[:5] == ["Who invented", "Which sport", "Which metal", "How many", "Which river"]
    assert openings[5:] == openings[:5]


def test_out_of_range_sizes_are_refused() -> None:
    for n in (0, facts.MAX_FACTS + 1):
        with pytest.raises(ValueError, match="n_facts must be between 1 and 1000"):
            facts.fact_rows(n)
