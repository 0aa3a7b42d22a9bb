"""Drift before the flip, from the option log-likelihoods of log-likelihood multiple-choice runs.

lm-eval scores a multiple-choice item (``mmlu``, ``arc_easy``, ``hellaswag``, ...) by the
log-likelihood of every option and logs them all. Normalised over the options (a softmax), they give
the model's probability of each option, before and after; the pair of distributions shows what
happened to an item beyond its 0/1 score:

* ``dp_gold`` = p_after(gold) - p_before(gold): the change of the gold option's normalised probability.
* At risk: a retained item (1->1) with ``dp_gold < -AT_RISK_DROP`` (0.2): still right, but the model
  moved at least a fifth of the probability away from the right answer.
* For a forgotten item (1->0), the lost mass ``L = p_before(gold) - p_after(gold)`` went to the other
  options; ``top_gain_share`` = (largest gain of a single other option) / L. The item is ``drift``
  when ``top_gain_share >= DRIFT_SHARE`` (0.5: most of the lost mass went to one other answer, the
  model now prefers a different answer) and ``mass_loss`` otherwise (the mass spread over the other
  options: the model became unsure rather than wrong in one direction). With k = 4 an even spread
  gives 1/3, a move to one option 1. The share exceeds 1 when other wrong options lost mass too.
  Labels ``two_options`` (k = 2: all lost mass goes to the other option by construction) and
  ``overtaken`` (L <= 0: the gold option did not lose mass, another one grew past it) carry no share.

Generative tasks log no option probabilities; their items get no drift figures (NaN), never a guess.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval.scoring import LETTERS

AT_RISK_DROP = 0.2
DRIFT_SHARE = 0.5
LABELS = ("drift", "mass_loss", "overtaken", "two_options")
ITEM_COLUMNS = ("k", "p_gold_before", "p_gold_after", "dp_gold", "lost_mass", "top_gain_share", "label")
"""The figures of :func:`item_drift` per item, after its keys and transition."""
_OPTION_INDEX = {letter: i for i, letter in enumerate(LETTERS)}


def _probs(lls: list[np.ndarray]) -> np.ndarray:
    """Softmax of equal-length log-likelihood rows, stacked."""
    x = np.array(lls, dtype=float)
    x = np.exp(x - x.max(axis=1, keepdims=True))
    return x / x.sum(axis=1, keepdims=True)


def _gold_index(gold: pd.Series) -> np.ndarray:
    """Option index of a gold letter (A -> 0); -1 when the gold is not a letter A-Z (or missing)."""
    codes, uniques = pd.factorize(gold)  # a few distinct golds: each is looked at once
    index = [_OPTION_INDEX.get(g, -1) for g in uniques]
    return np.array([*index, -1], dtype=np.int64)[codes]  # code -1: missing


def item_drift(samples: pd.DataFrame) -> pd.DataFrame:
    """Per item with option log-likelihoods on both sides: p_gold before/after, dp_gold, and for 1->0
    items lost_mass, top_gain_share, label. Empty frame when no item has them. ``attrs["left_out"]`` counts the
    items with option log-likelihoods on both sides that drift cannot read (the sides list different numbers of
    options, or the gold is not a letter among them), so the caller can say so."""
    cols = ["subtask", "category", "seed", "doc_id", "transition"]
    if "option_ll_before" not in samples:  # the samples table has both sides' option_ll or neither
        return pd.DataFrame(columns=[*cols, *ITEM_COLUMNS])
    lb, la = samples["option_ll_before"].to_numpy(), samples["option_ll_after"].to_numpy()
    k_before, k_after = _lengths(lb), _lengths(la)
    k = np.where(k_before == k_after, k_before, 0)
    gold = _gold_index(samples["gold"])
    usable = (k >= 2) & (gold >= 0) & (gold < k)
    out = samples.loc[usable, cols].astype({"transition": str}).reset_index(drop=True)
    out.attrs["left_out"] = int(((k_before > 0) & (k_after > 0) & ~usable).sum())
    rows = np.flatnonzero(usable)
    pb, pa = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    share, lost = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    label = np.full(len(rows), None, dtype=object)
    forgotten = out["transition"].to_numpy() == "1->0"
    for n_opt in np.unique(k[rows]):
        sel = np.flatnonzero(k[rows] == n_opt)
        idx = rows[sel]
        before, after = _probs([lb[i] for i in idx]), _probs([la[i] for i in idx])
        g = gold[idx]
        at = np.arange(len(idx))
        pb[sel], pa[sel] = before[at, g], after[at, g]
        gain = after - before
        gain[at, g] = -np.inf
        loss = before[at, g] - after[at, g]
        with np.errstate(divide="ignore", invalid="ignore"):
            top = np.where(loss > 0, gain.max(axis=1) / loss, np.nan)
        lost[sel], share[sel] = loss, top
        spread = np.where(top >= DRIFT_SHARE, "drift", "mass_loss")
        lab = np.where(n_opt == 2, "two_options", np.where(loss <= 0, "overtaken", spread))
        label[sel] = lab
    out["k"] = k[rows]
    out["p_gold_before"], out["p_gold_after"] = pb, pa
    out["dp_gold"] = pa - pb
    out["lost_mass"] = np.where(forgotten, lost, np.nan)
    out["top_gain_share"] = np.where(forgotten & (out["k"].to_numpy() > 2), share, np.nan)
    out["label"] = np.where(forgotten, label, None)
    return out


def _lengths(values: np.ndarray) -> np.ndarray:
    """The number of options of every logged list (list, tuple or array); 0 for anything else."""
    return np.array([len(v) if isinstance(v, (list, tuple, np.ndarray)) else 0 for v in values], dtype=np.int64)


def drift_summary(items: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed), keyed as text: n_mc items, median dp_gold of 1->1 items, n_at_risk and at_risk_share
    of 1->1, counts of each 1->0 label and drift_share = drift / (drift + mass_loss)."""
    kept = (items["transition"] == "1->1").to_numpy()
    dp_gold = items["dp_gold"].to_numpy(dtype=float)
    flags = pd.DataFrame(
        {
            "subtask": items["subtask"].astype(str),
            "seed": items["seed"].astype(str),
            "dp_gold_11": np.where(kept, dp_gold, np.nan),
            "n_at_risk": kept & (dp_gold < -AT_RISK_DROP),
            "n_11": kept,
            **{f"n_10_{lab}": (items["label"] == lab).to_numpy() for lab in LABELS},
        }
    )
    grouped = flags.groupby(["subtask", "seed"], sort=True)
    counts = grouped[["n_at_risk", "n_11", *(f"n_10_{lab}" for lab in LABELS)]].sum().astype(np.int64)
    out = pd.DataFrame(
        {"n_mc": grouped.size(), "dp_gold_median_11": grouped["dp_gold_11"].median(), "n_at_risk": counts["n_at_risk"]}
    )
    out["at_risk_share"] = counts["n_at_risk"] / counts["n_11"]  # 0/0 is NaN: no retained item, no share
    for lab in LABELS:
        out[f"n_10_{lab}"] = counts[f"n_10_{lab}"]
    split = out["n_10_drift"] + out["n_10_mass_loss"]
    out["drift_share"] = out["n_10_drift"] / split
    return out.reset_index()
