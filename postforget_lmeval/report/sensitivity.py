"""Extraction sensitivity: one pair of runs scored under several extraction policies, side by side.

The paper warns that measured forgetting depends on answer extraction. This module pairs the same
two directories once as the runs logged their scores and once per rescoring policy
(:mod:`postforget_lmeval.scoring.rescoring`), and puts F_true and BT_true per category and overall next to
each other, with how many paired items each policy scores differently from the log and from the
other policies, so a researcher sees how much of a forgetting figure is extraction.

``postforget-pair BEFORE AFTER -o OUT --rescore strict,lighteval`` writes ``sensitivity.csv`` and
``sensitivity.md`` into OUT, and every scoring's full outputs into ``OUT/<scoring>/``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from postforget_lmeval.api import pair
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing import SIDES
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.report.files import moved, output_folder, write_outputs
from postforget_lmeval.report.markdown import markdown_table
from postforget_lmeval.scoring.rescoring import POLICIES

LOGGED = "logged"
"""The scoring each run logged (no rescoring)."""
KEY = ["subtask", "doc_id", "seed", "replicate"]
"""What identifies one paired item in samples.parquet."""


@dataclass
class Sensitivity:
    """The side-by-side table (one row per category, then OVERALL) and what it was computed from."""

    table: pd.DataFrame
    scored_by: dict[str, str]  # scoring -> the scorer name its figures carry (e.g. "strict/2")
    results: dict[str, PairResult]  # scoring -> its pairing


def parse_policies(value: str) -> list[str]:
    """``"strict,lighteval"`` -> the policies, checked; a PairingError names what is wrong."""
    policies = [p.strip() for p in value.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies:
        raise PairingError(
            f"--rescore {value}: unknown polic{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown) or '(none)'}; "
            f"give one or more of {', '.join(POLICIES)}, comma-separated"
        )
    if len(set(policies)) < len(policies):
        raise PairingError(f"--rescore {value}: a policy is named twice")
    return policies


def compare(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    policies: Sequence[str],
    options: PairOptions | None = None,
    **overrides: Any,
) -> Sensitivity:
    """Pair ``before``/``after`` as logged and under each policy (``options``/``overrides`` go to every pairing)."""
    results = {LOGGED: pair(before, after, options, **{**overrides, "rescore": None})}
    for policy in policies:
        results[policy] = pair(before, after, options, **{**overrides, "rescore": policy})
    return summarise(results)


def _figures(result: PairResult, scoring: str) -> pd.DataFrame:
    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    return macro[["F_true_mean", "BT_true_mean"]].rename(
        columns={"F_true_mean": f"F_true_{scoring}", "BT_true_mean": f"BT_true_{scoring}"}
    )


def _correctness(result: PairResult, logged: bool = False) -> pd.DataFrame:
    """before/after correctness per paired item; ``logged`` takes the logged 0/1 where rescored."""
    samples = result.samples
    cols = {}
    for side in SIDES:
        source = f"correct_logged_{side}" if logged and f"correct_logged_{side}" in samples else side
        cols[side] = samples[source].astype("int8")
    # plain strings: a categorical category column could not take the OVERALL row
    return pd.DataFrame({"category": samples["category"].astype(str), **{c: samples[c] for c in KEY}, **cols})


def _changed(a: pd.DataFrame, b: pd.DataFrame, name: str) -> pd.Series:
    """Per category (and OVERALL): paired items whose correctness differs on either side."""
    joined = a.merge(b[[*KEY, "before", "after"]], on=KEY, suffixes=("", "_other"))
    differs = (joined["before"] != joined["before_other"]) | (joined["after"] != joined["after_other"])
    per = differs.groupby(joined["category"]).sum()
    per[OVERALL] = int(differs.sum())
    return per.astype("int64").rename(name)


def summarise(results: dict[str, PairResult]) -> Sensitivity:
    """The side-by-side table from pairings of the same runs (the first one is the reference for items)."""
    scorings = list(results)
    table = pd.concat([_figures(results[s], s) for s in scorings], axis=1)
    table = table[[f"{m}_{s}" for m in ("F_true", "BT_true") for s in scorings]]
    reference = _correctness(results[scorings[0]])
    counts = reference.groupby("category").size()
    counts[OVERALL] = len(reference)
    columns = [counts.rename("n_items")]
    for scoring in scorings:
        if scoring != LOGGED:
            own = _correctness(results[scoring])
            columns.append(_changed(own, _correctness(results[scoring], logged=True), f"changed_{scoring}_vs_{LOGGED}"))
    for a, b in combinations([s for s in scorings if s != LOGGED], 2):
        columns.append(_changed(_correctness(results[a]), _correctness(results[b]), f"changed_{a}_vs_{b}"))
    table = table.join(pd.concat(columns, axis=1), how="left")
    order = [c for c in table.index if c != OVERALL] + [OVERALL]
    table = table.loc[order].rename_axis("category").reset_index()
    scored_by = {s: ", ".join(sorted(set(results[s].subtasks["scored_by"].dropna()))) for s in scorings}
    return Sensitivity(table, scored_by, results)


def markdown(sens: Sensitivity) -> str:
    """sensitivity.md: the table in percent, with what scored each column."""
    scorings = list(sens.results)
    head = ["category", *(f"F_true {s}" for s in scorings), *(f"BT_true {s}" for s in scorings)]
    counts = [c for c in sens.table.columns if c == "n_items" or c.startswith("changed_")]
    head += [c.replace("changed_", "changed ").replace("_vs_", " vs ") for c in counts]
    lines = [
        "# Extraction sensitivity",
        "",
        "F_true and BT_true (%, macro over sub-benchmarks and seeds) of the same "
        "paired runs under each scoring; 'changed' counts paired items (item x seed x replicate) whose "
        "correctness before or after differs between two scorings.",
        "",
    ]
    lines += [f"- {s}: {sens.scored_by.get(s) or 'as logged'}" for s in scorings] + [""]
    rows = []
    for _, row in sens.table.iterrows():
        figures = [row[f"{m}_{s}"] for m in ("F_true", "BT_true") for s in scorings]
        cells = [str(row["category"]), *(f"{100 * v:.1f}" if pd.notna(v) else "" for v in figures)]
        rows.append(cells + [str(int(row[c])) if pd.notna(row[c]) else "" for c in counts])
    return "\n".join([*lines, markdown_table(head, rows)]) + "\n"


def write(sens: Sensitivity, out_dir: str | os.PathLike[str], plot: bool = True) -> list[Path]:
    """sensitivity.csv and sensitivity.md in out_dir, and each scoring's outputs in out_dir/<scoring>/."""
    written = []
    with output_folder(out_dir) as out:
        for scoring, result in sens.results.items():
            written += write_outputs(result, out / scoring, plot=plot)
        write_csv(sens.table, out / "sensitivity.csv")
        (out / "sensitivity.md").write_text(markdown(sens), encoding="utf-8")
    return moved([*written, out / "sensitivity.csv", out / "sensitivity.md"], out, out_dir)
