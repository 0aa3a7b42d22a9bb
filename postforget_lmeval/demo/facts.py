"""Synthetic multiple-choice fact sets for the offline forgetting demo (``postforget demo``).

Two sets of made-up facts in the postforget answer format, about the same invented entities:

* ``pretrain``: the knowledge a tiny model learns first and that the ``postforget_demo_facts`` task
  evaluates ("What is the capital of the invented country Vorlandia?").
* ``posttrain``: other facts about the same entities, with other relations and other options ("Which
  sport does the Vorlandia club play?"), that the post-training stage teaches. Nothing in it
  contradicts a pretrain fact, but learning it rewrites what the model holds about each entity,
  which is how post-training makes a model forget. (With disjoint entities a model this small
  keeps the old facts in weights that post-training barely touches, and how much it forgets
  depends mostly on the random seed.)

Every fact is invented, so no real model can know it: the demo's before/after accuracies come only
from what the demo itself trained. Generation is driven by ``random.Random`` with integer or string
seeds alone (no ``hash()``, no set iteration), so a seed gives the same rows on every machine and
Python run, and a smaller ``n_facts`` gives the first rows of a larger one; the task's ``doc_hash``
values, and hence the pairing of two runs, depend on that.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import datasets

from postforget_lmeval.scoring import LETTERS
from postforget_lmeval.tasks import render_chat, stable_shuffle

FactSet = Literal["pretrain", "posttrain"]

DEFAULT_N_FACTS = 300
N_OPTIONS = 4
ANSWER_PREFIX = "\nAnswer: "
"""What the demo models learn to write after the prompt: the task extracts ``Answer: X``."""


@dataclass(frozen=True)
class _Relation:
    """One question template and the pool its options come from.

    ``values=None`` means the options are invented names (capitals, inventors), drawn from the same
    name generator as the entities so they cannot be guessed from real-world knowledge.
    """

    template: str
    values: tuple[str, ...] | None = None


_COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "grey", "brown", "silver")
_FOODS = (
    "moss",
    "pebbles",
    "honey",
    "fish",
    "seeds",
    "bark",
    "beetles",
    "mushrooms",
    "snow",
    "sand",
    "leaves",
    "berries",
)
_INSTRUMENTS = (
    "harp",
    "lute",
    "drum",
    "flute",
    "violin",
    "trumpet",
    "cello",
    "oboe",
    "banjo",
    "organ",
    "horn",
    "zither",
)
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
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

_RELATIONS: dict[str, tuple[_Relation, ...]] = {
    "pretrain": (
        _Relation("What is the capital of the invented country {}?"),
        _Relation("Which colour is the {} fruit?", _COLOURS),
        _Relation("What does the {} creature eat?", _FOODS),
        _Relation("Which instrument does the bard {} play?", _INSTRUMENTS),
        _Relation("In which month is the {} festival held?", _MONTHS),
    ),
    "posttrain": (
        _Relation("Who invented the {} machine?"),
        _Relation("Which sport does the {} club play?", _SPORTS),
        _Relation("Which metal is the {} coin made of?", _METALS),
        _Relation("How many moons does the planet {} have?", _NUMBERS),
        _Relation("Which river flows through the {} valley?"),
    ),
}
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


def fact_rows(facts: FactSet = "pretrain", seed: int = 0, n_facts: int = DEFAULT_N_FACTS) -> list[dict]:
    """The rows of one fact set: ``id``, ``question``, ``choices`` (4), ``answer`` (gold index).

    Row ``i`` of either set is about entity ``i``, with the set's relations taken in turn. Each row
    is drawn from its own seeded generator and the gold letters are balanced in blocks of four, so
    the first rows do not depend on ``n_facts`` and every prefix is balanced to within one.
    """
    if facts not in _RELATIONS:
        raise ValueError(f"facts must be one of {sorted(_RELATIONS)}, got {facts!r}")
    if not 1 <= n_facts <= MAX_FACTS:
        raise ValueError(f"n_facts must be between 1 and {MAX_FACTS}, got {n_facts}")
    names = _names(random.Random(seed))
    pools = {
        (set_name, r): rel.values or tuple(next(names) for _ in range(_INVENTED_VALUE_POOL))
        for set_name in ("pretrain", "posttrain")
        for r, rel in enumerate(_RELATIONS[set_name])
    }
    entities = [next(names) for _ in range(n_facts)]
    relations = _RELATIONS[facts]
    rows = []
    for i, entity in enumerate(entities):
        # str seeds are hashed with SHA-512, not hash(): stable across processes
        block = random.Random(f"{seed}/{facts}/gold/{i // N_OPTIONS}").sample(range(N_OPTIONS), N_OPTIONS)
        gold = block[i % N_OPTIONS]
        r = i % len(relations)
        correct, *distractors = random.Random(f"{seed}/{facts}/{i}").sample(pools[facts, r], N_OPTIONS)
        rows.append(
            {
                "id": f"{facts}-{i:04d}",
                "question": relations[r].template.format(entity),
                "choices": [*distractors[:gold], correct, *distractors[gold:]],
                "answer": gold,
            }
        )
    return rows


def facts_dataset(
    facts: FactSet = "pretrain", seed: int = 0, n_facts: int = DEFAULT_N_FACTS, **_ignored: object
) -> datasets.DatasetDict:
    """The fact set as lm-eval's ``custom_dataset`` hook wants it: one ``test`` split.

    lm-eval passes the task's whole metadata (version, model args, ...) as keyword arguments; only
    ``facts``, ``seed`` and ``n_facts`` matter here, the rest is ignored.
    """
    rows = fact_rows(facts, int(seed), int(n_facts))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def reorder_options(rows: Sequence[dict], seed: int) -> list[dict]:
    """The same facts with each row's options in another seeded order (and ``answer`` moved along).

    The demo's two unrelated models learn the answer format from the posttrain facts. Those facts
    name the same entities as the pretrain facts, so a model that learnt them with the same letters
    would carry an entity's letter over to the pretrain question, and two such models would agree
    with each other far more than unrelated models do; their own option orders make their guesses
    independent.
    """
    out = []
    for row in rows:
        choices = stable_shuffle(row["choices"], f"{seed}/{row['id']}")
        out.append({**row, "choices": choices, "answer": choices.index(row["choices"][row["answer"]])})
    return out


def prompt(row: dict) -> str:
    """The zero-shot prompt the ``postforget_demo_facts`` task renders for a row."""
    return render_chat(row["question"], row["choices"], "letter")


def target(row: dict) -> str:
    """The continuation the demo models are trained to generate after :func:`prompt`."""
    return f"{ANSWER_PREFIX}{LETTERS[row['answer']]}"


def corpus(rows: Sequence[dict]) -> list[str]:
    """Every text the demo tokenizer must encode without unknown tokens, for its vocabulary."""
    texts = [prompt(row) + target(row) for row in rows]
    texts += [ANSWER_PREFIX + letter for letter in LETTERS[:N_OPTIONS]]
    return texts
