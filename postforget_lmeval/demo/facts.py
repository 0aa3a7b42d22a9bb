"""New facts for the demo's post-training (``postforget demo``): about invented entities, so no model knew them.

"Who invented the Vorlandia machine?", "Which sport does the Vorlandia club play?": what the demo's post-training
stage teaches a real model that knows real facts about countries. Every fact is invented, so learning it is new
knowledge, and what the model loses of the real facts meanwhile is the forgetting the demo measures.
Generation is driven by ``random.Random`` with integer or string seeds alone (no ``hash()``, no set iteration), so
the same rows come out on every machine and Python run, and a smaller ``n_facts`` gives the first rows of a
larger one.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

N_OPTIONS = 4


@dataclass(frozen=True)
class _Relation:
    """One question template and the pool its options come from.

    ``values=None`` means the options are invented names (inventors, rivers), drawn from the same name generator
    as the entities so they cannot be guessed from real-world knowledge.
    """

    template: str
    values: tuple[str, ...] | None = None


_SPORTS = (
    "rowing",
    "fencing",
    "archery",
    "chess",
    "polo",
    "curling",
    "cricket",
    "hockey",
    "tennis",
    "rugby",
    "sailing",
    "wrestling",
)
_METALS = (
    "copper",
    "bronze",
    "iron",
    "tin",
    "zinc",
    "nickel",
    "lead",
    "brass",
    "steel",
    "cobalt",
    "pewter",
    "platinum",
)
_NUMBERS = tuple(str(i) for i in range(2, 14))

_RELATIONS = (
    _Relation("Who invented the {} machine?"),
    _Relation("Which sport does the {} club play?", _SPORTS),
    _Relation("Which metal is the {} coin made of?", _METALS),
    _Relation("How many moons does the planet {} have?", _NUMBERS),
    _Relation("Which river flows through the {} valley?"),
)
MAX_FACTS = 1000

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "gl",
    "kr",
    "pl",
    "st",
    "th",
    "tr",
    "zh",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "th", "x")
_INVENTED_VALUE_POOL = 24
"""Invented capitals/inventors/rivers per relation: several facts share an answer, as real ones do."""


def _names(rng: random.Random) -> Iterator[str]:
    """Endless stream of distinct invented capitalised words (2-3 syllables)."""
    seen: set[str] = set()
    while True:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.choice((2, 2, 3))))
        word = (word + rng.choice(_CODAS)).capitalize()
        if word not in seen:
            seen.add(word)
            yield word


def fact_rows(n_facts: int = MAX_FACTS, seed: int = 0) -> list[dict]:
    """The rows: ``id``, ``question``, ``choices`` (4), ``answer`` (gold index).

    Row ``i`` is about entity ``i``, with the relations taken in turn. Each row is drawn from its own seeded
    generator and the gold positions are balanced in blocks of four, so the first rows do not depend on
    ``n_facts`` and every prefix is balanced to within one.
    """
    if not 1 <= n_facts <= MAX_FACTS:
        raise ValueError(f"n_facts must be between 1 and {MAX_FACTS}, got {n_facts}")
    names = _names(random.Random(seed))
    pools = [rel.values or tuple(next(names) for _ in range(_INVENTED_VALUE_POOL)) for rel in _RELATIONS]
    rows = []
    for i in range(n_facts):
        entity = next(names)
        # str seeds are hashed with SHA-512, not hash(): stable across processes
        block = random.Random(f"{seed}/gold/{i // N_OPTIONS}").sample(range(N_OPTIONS), N_OPTIONS)
        gold = block[i % N_OPTIONS]
        r = i % len(_RELATIONS)
        correct, *distractors = random.Random(f"{seed}/{i}").sample(pools[r], N_OPTIONS)
        rows.append(
            {
                "id": f"posttrain-{i:04d}",
                "question": _RELATIONS[r].template.format(entity),
                "choices": [*distractors[:gold], correct, *distractors[gold:]],
                "answer": gold,
            }
        )
    return rows
