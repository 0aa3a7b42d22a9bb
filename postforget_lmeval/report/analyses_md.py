"""The report.md section of the analyses beyond the paper (rendering only; the figures come from ``annotate``)."""

from __future__ import annotations

import math

import pandas as pd

from postforget_lmeval.analyses import ABOVE_MAX, ABOVE_MAX_NOTE, CLUSTER, MCNEMAR
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report.markdown import markdown_table

_TOP = 15  # rows listed in the per-sub-benchmark tables
NOISE_LEGEND = (
    "Floor: the same figures for each side's seeds (every seed it logged) paired with each other (the model against "
    "itself), averaged over seed pairs; floor before / after: each side's own; the floor subtracted pools both "
    "sides when both sample with two or more seeds, else is the one side that does ('floor from'; a greedy side, "
    "whose seeds always agree, is left out); log-likelihood scoring: 0. Beyond noise: the figure minus its floor, "
    "with a 95% bootstrap interval; F_true, floor and beyond average the same sub-benchmarks (those with a floor). "
    "⚠ shared seed: both sides sampled with the same seed, so their guesses are correlated and beyond noise is "
    "biased down; rerun one side under different seeds and pair with --seed-match order. "
    "NFR/NFI and PFR/PFI: negative and positive flip rate and impact (Yan et al., 2021); docs/method.md."
)


def _pct(x: object) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * float(x):.1f}%"


def _num(x: object, fmt: str = ".0f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(float(x), fmt)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return markdown_table(header, rows).split("\n")


def _macro(result: PairResult) -> pd.DataFrame:
    cats = result.categories
    return cats[cats["average"] == "macro"] if "average" in cats else cats


def _listed(names: list[str], most: int = 6) -> str:
    """``a, b, c`` (and how many more)."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def overall_line(result: PairResult) -> str:
    """One line of the overall test (``summary['analyses']['overall_test']``), for the terminal and report.md; empty
    without analyses."""
    t = (result.summary.get("analyses") or {}).get("overall_test")
    if not t:
        return ""
    return (
        f"Across all {t['strata']} sub-benchmarks (CMH, clusters kept): X² {t['statistic']:.1f}, "
        f"p {t['p_value']:.2g}; {t['n_10']:,} 1→0, {t['n_01']:,} 0→1"
    )


def _significance(result: PairResult) -> list[str]:
    sig = result.tables.get("significance")
    if sig is None or sig.empty:
        return []
    hits = sig[sig["significant"]].sort_values("q_bh")
    clustered = sorted(map(str, sig.loc[sig["test"] == CLUSTER, "subtask"].unique())) if "test" in sig else []
    lines = [
        "### Is it more than noise?",
        "",
        f"Exact McNemar test per sub-benchmark and seed on the discordant items (n_10 vs n_01); where items share a "
        f"text ({_listed(clustered) or 'none here'}), the cluster sign-flip test, which keeps each text's flips "
        f"together; Benjamini–Hochberg over all {len(sig)} rows of this pair: **{len(hits)} significant at q < 0.05** "
        f"({(hits['direction'] == 'forgetting').sum()} net forgetting, "
        f"{(hits['direction'] == 'backward_transfer').sum()} net backward transfer).",
        "",
        *(
            [overall_line(result) + " (null: no net forgetting in any sub-benchmark; docs/analyses.md).", ""]
            if overall_line(result)
            else []
        ),
    ]
    if len(hits):
        rows = [
            [
                r.subtask,
                str(r.seed),
                str(r.n_10),
                str(r.n_01),
                f"{r.p_cluster if getattr(r, 'test', MCNEMAR) == CLUSTER else r.p_mcnemar:.2g}",
                getattr(r, "test", MCNEMAR),
                f"{r.q_bh:.2g}",
                r.direction,
            ]
            for r in hits.head(_TOP).itertuples()
        ]
        lines += _table(["sub-benchmark", "seed", "n_10", "n_01", "p", "test", "q", "direction"], rows)
        if len(hits) > _TOP:
            lines.append(f"\n({len(hits) - _TOP} more in significance.csv)")
        lines.append("")
    macro = _macro(result)
    if "F_true_lo" in macro:
        unit = "items resampled within sub-benchmarks" + (
            f"; whole texts (clusters) resampled in {_listed(clustered)}" if clustered else ""
        )
        lines += [f"95% bootstrap intervals ({unit}; macro average as above):", ""]
        rows = [
            [
                r["category"],
                f"{_pct(r['F_true_mean'])} [{_pct(r['F_true_lo'])}, {_pct(r['F_true_hi'])}]",
                f"{_pct(r['BT_true_mean'])} [{_pct(r['BT_true_lo'])}, {_pct(r['BT_true_hi'])}]",
            ]
            for _, r in macro.iterrows()
        ]
        lines += _table(["category", "F_true [95% CI]", "BT_true [95% CI]"], rows) + [""]
    return lines


def above_max_rows(result: PairResult) -> list[str]:
    """One line per (sub-benchmark, seed) row whose F_true exceeds F_max or BT_true BT_max (the first of each kind,
    then how many more); empty when none does or the analyses did not run."""
    rows = result.subtasks
    if not set(ABOVE_MAX) <= set(rows.columns):
        return []
    lines = []
    for flag, (rate, known) in ABOVE_MAX.items():
        hits = rows[rows[flag].astype(bool)]
        lines += [
            f"{r.subtask}, seed {r.seed}: {rate} {_pct(getattr(r, rate))} > {known} {_pct(getattr(r, known))}"
            for r in hits.head(_TOP).itertuples()
        ] + ([f"({len(hits) - _TOP} more rows with {flag} in subtasks.csv)"] if len(hits) > _TOP else [])
    return lines


def _above_max(result: PairResult) -> list[str]:
    lines = above_max_rows(result)
    if not lines:
        return []
    return ["### Rows above F_max / BT_max", "", f"{ABOVE_MAX_NOTE}.", "", *(f"- {line}" for line in lines), ""]


def _beyond(row: pd.Series, metric: str) -> str:
    """``metric`` beyond the noise floor with its interval, in %, flagged where a shared seed biases it; '–' where
    there is no floor (the floor's cell says why)."""
    value = row.get(f"{metric}_beyond_noise_mean")
    if value is None or pd.isna(value):
        return "–"
    lo, hi = row.get(f"{metric}_beyond_noise_lo"), row.get(f"{metric}_beyond_noise_hi")
    shared = row.get("noise_shared_seed")
    flag = " ⚠ shared seed" if shared is not None and not pd.isna(shared) and bool(shared) else ""
    return f"{_pct(value)} [{_pct(lo)}, {_pct(hi)}]{flag}"


def noise_frame(result: PairResult) -> pd.DataFrame:
    """Per category and OVERALL (macro): F_true and BT_true, the noise floor beside each and the figure beyond it
    with its 95% interval, all averaged over the same sub-benchmarks (those with a floor, counted in
    ``sub-benchmarks``), each side's own floor, whose floor is subtracted, the note, and the flip metrics; empty
    when ``annotate`` has not run."""
    macro = _macro(result)
    if "F_true_noise_mean" not in macro:
        return pd.DataFrame()
    counts = result.subtasks.groupby("category")["subtask"].nunique()
    counts["OVERALL"] = result.subtasks["subtask"].nunique()
    rows = []
    for _, r in macro.iterrows():
        rows.append(
            {
                "category": r["category"],
                "sub-benchmarks": f"{_num(r.get('noise_rows'))} of {int(counts.get(r['category'], 0))}",
                "F_true": _pct(r.get("F_true_headline_mean")),
                "F_true floor": _pct(r["F_true_noise_mean"]),
                "F_true beyond noise [95% CI]": _beyond(r, "F_true"),
                "BT_true": _pct(r.get("BT_true_headline_mean")),
                "BT_true floor": _pct(r["BT_true_noise_mean"]),
                "BT_true beyond noise [95% CI]": _beyond(r, "BT_true"),
                "floor before": _pct(r.get("F_true_noise_before_mean")),
                "floor after": _pct(r.get("F_true_noise_after_mean")),
                "floor from": r.get("noise_floor_from") or "–",
                **{m: _pct(r.get(f"{m}_mean")) for m in ("NFR", "NFI", "PFR", "PFI")},
                "note": r.get("noise_note") or "",
            }
        )
    return pd.DataFrame(rows)


def shared_seed_warning(result: PairResult) -> str:
    """The shared-seed flag in a sentence naming the rows, or '' when no headline row shares a sampling seed."""
    flag = result.summary.get("analyses", {}).get("noise_floor", {}).get("shared_seed", {})
    if not flag.get("flagged"):
        return ""
    rows = flag["rows"]
    listed = ", ".join(rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
    return f"{listed}: {flag['warning']}"


def _noise(result: PairResult) -> list[str]:
    frame = noise_frame(result)
    if frame.empty:
        return []
    lines = ["### Forgetting or sampling? The noise floor and the flips", "", NOISE_LEGEND, ""]
    warning = shared_seed_warning(result)
    if warning:
        lines += [f"**⚠ {warning}**", ""]
    return lines + _table(list(frame.columns), frame.astype(str).to_numpy().tolist()) + [""]


def _failure_modes(result: PairResult) -> list[str]:
    table = result.tables.get("failure_modes")
    if table is None or table.empty:
        return []
    modes = ("wrong", "invalid", "no_answer", "cut", "refusal", "unknown")
    f = {m: int(table[f"n_10_{m}"].sum()) for m in modes}
    b = {m: int(table[f"n_01_{m}"].sum()) for m in modes}
    lines = [
        "### Why were items forgotten?",
        "",
        "Failure mode of the wrong side (after for 1→0, before for 0→1), all sub-benchmarks and seeds: "
        "`wrong` is a wrong option (knowledge), `invalid`, `no_answer`, `cut` (token limit / unfinished "
        "thinking) and `refusal` are format.",
        "",
    ]
    rows = [["1→0", *(str(f[m]) for m in modes)]]
    if "n_10_wrong_kept" in table:  # log-likelihood twins ran: each mode's 1→0 split by knowledge
        for label in ("kept", "lost"):
            rows.append([f"1→0, knowledge {label}", *(str(int(table[f"n_10_{m}_{label}"].sum())) for m in modes)])
        lines += [
            "The knowledge rows count the 1→0 items of each mode whose log-likelihood twin still ranks the gold "
            "option first after (kept) or not (lost); items without a twin are in neither.",
            "",
        ]
    lines += _table(["transition", *modes], [*rows, ["0→1", *(str(b[m]) for m in modes)]])
    lines += ["", "Share of forgetting that is format (macro), answer-format adherence and median reply length:", ""]
    rows = [
        [
            r["category"],
            _pct(r.get("F_format_share_mean")),
            _pct(r.get("BT_format_share_mean")),
            f"{_pct(r.get('answered_before_mean'))} → {_pct(r.get('answered_after_mean'))}",
            f"{_num(r.get('median_chars_before_mean'))} → {_num(r.get('median_chars_after_mean'))}",
        ]
        for _, r in _macro(result).iterrows()
    ]
    return lines + _table(["category", "1→0 format", "0→1 format", "answered", "median chars"], rows) + [""]


def _drift(result: PairResult) -> list[str]:
    lines = ["### Was it coming? Drift before the flip", ""]
    drift = result.summary.get("analyses", {}).get("drift", {})
    left_out = drift.get("left_out", 0)
    if left_out:
        lines += [
            f"{left_out} item(s) log option log-likelihoods on both sides but are left out of drift: the two sides "
            "list different numbers of options, or the logged gold is not a letter among the options (lm-eval tasks "
            "whose target is the answer's text).",
            "",
        ]
    items = result.tables.get("drift_items")
    if items is None or items.empty:
        return lines + [
            "No other item logs option log-likelihoods on both sides: the drift of the gold option's probability "
            "cannot be measured from these samples."
            if left_out
            else "No item logs option log-likelihoods on both sides (generative tasks): the drift of the "
            "gold option's probability cannot be measured from these samples.",
            "",
        ]
    kept = items[items["transition"] == "1->1"]
    risk = int((kept["dp_gold"] < -drift.get("at_risk_drop", 0.2)).sum())
    labels = items["label"].value_counts()
    lines += [
        f"{len(items)} log-likelihood multiple-choice items. Retained (1→1): {len(kept)}, "
        f"of which **{risk} at risk** "
        f"({_pct(risk / len(kept) if len(kept) else float('nan'))}: gold probability fell by more than 0.2; median "
        f"change {_num(kept['dp_gold'].median(), '+.3f')}).",
        f"Forgotten (1→0): {int(labels.get('drift', 0))} drift (most lost mass to one other option), "
        f"{int(labels.get('mass_loss', 0))} mass loss (spread over the others), {int(labels.get('overtaken', 0))} "
        f"overtaken, {int(labels.get('two_options', 0))} with two options.",
        "",
    ]
    sub = result.subtasks.dropna(subset=["at_risk_share"]).sort_values("at_risk_share", ascending=False).head(_TOP)
    rows = [
        [
            r["subtask"],
            str(r["seed"]),
            _pct(r["at_risk_share"]),
            _num(r["dp_gold_median_11"], "+.3f"),
            _pct(r["drift_share"]),
        ]
        for _, r in sub.iterrows()
    ]
    header = ["sub-benchmark", "seed", "at risk (1→1)", "median Δp_gold (1→1)", "drift share (1→0)"]
    return lines + _table(header, rows) + [""]


KNOWLEDGE_LEGEND = (
    "Each generated 1→0 is knowledge kept when the after model still ranks the gold option first by log-likelihood "
    "(its twin, the same item scored as `postforget_<subtask>_ll`), else knowledge lost; each 0→1 had the knowledge "
    "there before when the before model already ranked the gold option first. Shares pooled over items and seeds, "
    "with 95% bootstrap intervals (items resampled within sub-benchmarks); docs/analyses.md."
)


def knowledge_frame(result: PairResult) -> pd.DataFrame:
    """Per category and OVERALL: the labelled flips and the shares of knowledge kept and there before, with their
    intervals, in %; empty without log-likelihood twins beside the generative runs."""
    table = result.tables.get("knowledge")
    if table is None or table.empty:
        return pd.DataFrame()
    rows = table[table["level"] != "subtask"]

    def share(r: pd.Series, name: str) -> str:
        return f"{_pct(r[name])} [{_pct(r[f'{name}_lo'])}, {_pct(r[f'{name}_hi'])}]"

    return pd.DataFrame(
        {
            "category": rows["category"],
            "1→0 with a twin": rows["n_10"].astype(int).astype(str),
            "knowledge kept / lost": [f"{r.n_10_kept} / {r.n_10_lost}" for r in rows.itertuples()],
            "kept share [95% CI]": [share(r, "kept_share") for _, r in rows.iterrows()],
            "0→1 with a twin": rows["n_01"].astype(int).astype(str),
            "there before [95% CI]": [share(r, "there_before_share") for _, r in rows.iterrows()],
        }
    ).reset_index(drop=True)


def _knowledge(result: PairResult) -> list[str]:
    frame = knowledge_frame(result)
    if frame.empty:
        return []
    lines = ["### Knowledge or format? The log-likelihood twins", "", KNOWLEDGE_LEGEND, ""]
    return lines + _table(list(frame.columns), frame.to_numpy().tolist()) + [""]


def analyses_markdown(result: PairResult) -> str:
    """The "Analyses beyond the paper" section of report.md; empty when ``annotate`` has not run."""
    if "significance" not in result.tables:
        return ""
    lines = [
        "## Analyses beyond the paper",
        "",
        *_failure_modes(result),
        *_significance(result),
        *_noise(result),
        *_above_max(result),
    ]
    lines += _drift(result)
    lines += _knowledge(result)
    return "\n".join(lines).rstrip() + "\n"
