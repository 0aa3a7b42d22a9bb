"""Why an item was forgotten: the failure mode of the wrong side of every 1->0 and 0->1 item.

For a 1->0 item the after side is wrong, for a 0->1 item the before side; its mode is one of

* ``wrong``: an answer that is one of the options, but not the gold one (knowledge);
* ``invalid``: an answer outside the item's options (format);
* ``cut``: the generation stopped at the token limit: an unclosed ``<think>`` (status ``unfinished``),
  or no answer and a reply at least ``CUT_CHARS_PER_TOKEN x max_gen_toks`` characters long (format);
* ``refusal``: no answer, and the reply refuses by the rule of :mod:`postforget_lmeval.refusal` (format);
* ``no_answer``: nothing extractable otherwise (format);
* ``unknown``: the log does not say (an ordinary generative task without an extraction status).

Log-likelihood multiple-choice items always answer (the most likely option), so their misses are
``wrong``. For ordinary generative tasks lm-eval's regex filters log ``[invalid]`` when they find no
answer: that is ``no_answer``; any other logged answer of such a task is ``unknown``, since without a
status we cannot tell an extracted answer from a raw reply.

What a log cannot tell: lm-eval records no finish reason. With ``think_end_token`` the model class keeps
only the text after the end-of-thinking token, and with a chat template that opens ``<think>`` in the
prompt a reply cut inside its thinking is the bare trace, with no tag at all: it reads as
``no_answer``. Its length is then the remaining evidence: a reply cut at ``max_gen_toks`` tokens is at
least about 2 characters per token long for current tokenisers (3-4 on English prose), so an unanswered
reply that long is called ``cut``. An unanswered reply of a run whose ``max_gen_toks`` is unknown, or a
cut reply shorter than that bound, stays ``no_answer``; both count as format failures either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval.refusal import is_refusal

MODES = ("wrong", "invalid", "no_answer", "cut", "refusal", "unknown")
FORMAT_MODES = ("invalid", "no_answer", "cut", "refusal")
CUT_CHARS_PER_TOKEN = 2.0
LMEVAL_NO_MATCH = "[invalid]"  # lm-eval's regex filter fallback
_UNANSWERED = {"no_answer": "no_answer", "unfinished": "cut", "invalid": "invalid", "refused": "refusal"}
DIRECTIONS = {"1->0": ("F", "after"), "0->1": ("BT", "before")}
"""transition -> (prefix of its columns, the side that is wrong)."""


def _mode_of(status: Any) -> str:
    if not isinstance(status, str):
        return "unknown"
    return "wrong" if status == "answered" else _UNANSWERED.get(status, "unknown")


def _has_options(values: pd.Series) -> np.ndarray:
    out = values.notna().to_numpy(copy=True)  # generative items log none: only the others are looked at
    out[out] = [isinstance(v, (list, tuple, np.ndarray)) and len(v) > 0 for v in values.to_numpy()[out]]
    return out


def _column(samples: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    return samples[name] if name in samples else pd.Series(default, index=samples.index, dtype=object)


def answered(samples: pd.DataFrame, side: str) -> np.ndarray:
    """Per item: 1.0 answered, 0.0 not (invalid, no answer, cut, refused), NaN when the log does not say."""
    status = _column(samples, f"status_{side}").astype(object)
    answer = _column(samples, f"answer_{side}").astype(object)
    out = np.full(len(samples), np.nan)
    known = status.notna().to_numpy()
    out[known] = (status[known] == "answered").to_numpy(dtype=float)
    out[~known & _has_options(_column(samples, f"option_ll_{side}"))] = 1.0
    no_match = (answer == LMEVAL_NO_MATCH).to_numpy()
    groups = samples.groupby(["subtask", "seed"], observed=True, sort=False).ngroup().to_numpy()
    fallback_groups = np.unique(groups[no_match & ~known])
    uses_fallback = np.isin(groups, fallback_groups) & ~known & answer.notna().to_numpy()
    out[uses_fallback] = (~no_match[uses_fallback]).astype(float)
    return out


def item_modes(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], load_item: Callable[[str, int], Any] | None
) -> pd.DataFrame:
    """The mode of every 1->0 and 0->1 item: subtask, category, seed, doc_id, transition, mode, response_chars.

    ``max_gen_toks``: per samples file of the wrong side. ``load_item`` is called only for the items
    without an answer that are not already ``cut`` by status or length (to read their reply for a
    refusal, and its length when the log has none); an item it cannot read stays ``no_answer``. The
    frame's ``attrs`` count the items read back (``loaded``) and those that could not be (``unreadable``).
    """
    frames, loaded, unreadable = [], 0, 0
    for transition, (_, side) in DIRECTIONS.items():
        items = samples[(samples["transition"] == transition).to_numpy()]  # no conversion of the column to text
        status = _column(items, f"status_{side}").astype(object)
        answer = _column(items, f"answer_{side}").astype(object)
        chars = _column(items, f"response_chars_{side}", np.nan).astype(float).to_numpy(copy=True)
        files = _column(items, f"file_{side}").astype(object)
        limit = files.map({f: max_gen_toks.get(str(f)) for f in files.unique()}).astype(float).to_numpy()
        mode = np.array([_mode_of(s) for s in status], dtype=object)
        mode[status.isna().to_numpy() & _has_options(_column(items, f"option_ll_{side}"))] = "wrong"
        mode[status.isna().to_numpy() & (answer == LMEVAL_NO_MATCH).to_numpy()] = "no_answer"
        locators = _column(items, f"locator_{side}").to_numpy()
        replicate = _column(items, "replicate", 0).fillna(0).astype(int).to_numpy()
        for i in np.flatnonzero(mode == "no_answer"):
            if not chars[i] >= CUT_CHARS_PER_TOKEN * limit[i] and load_item is not None and files.iloc[i] is not None:
                try:
                    responses = load_item(str(files.iloc[i]), int(locators[i])).responses
                except (OSError, ValueError, KeyError, IndexError):
                    unreadable += 1
                    continue
                loaded += 1
                reply = responses[replicate[i]] if replicate[i] < len(responses) else ""
                if np.isnan(chars[i]):
                    chars[i] = len(reply)
                if is_refusal(reply):
                    mode[i] = "refusal"
            if mode[i] == "no_answer" and chars[i] >= CUT_CHARS_PER_TOKEN * limit[i]:
                mode[i] = "cut"
        frames.append(
            items[["subtask", "category", "seed", "doc_id"]].assign(
                transition=transition, side=side, mode=mode, response_chars=chars
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(loaded=loaded, unreadable=unreadable)
    return out


def mode_counts(modes: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed) of ``keys``: ``n_10_<mode>`` and ``n_01_<mode>`` counts and the format shares.

    ``F_format_share`` = format failures / (1->0 items whose mode is known); NaN without such items.
    ``BT_format_share`` likewise for the before side of 0->1 items.
    """
    out = keys[["subtask", "seed"]].astype(str).drop_duplicates().set_index(["subtask", "seed"])
    for transition, (prefix, _) in DIRECTIONS.items():
        sel = modes[modes["transition"] == transition]
        counts = pd.crosstab([sel["subtask"].astype(str), sel["seed"].astype(str)], sel["mode"])
        counts = counts.reindex(columns=list(MODES), fill_value=0).reindex(out.index, fill_value=0)
        tag = "n_" + transition.replace("->", "")
        for m in MODES:
            out[f"{tag}_{m}"] = counts[m].astype(int)
        known = counts[list(MODES)].sum(axis=1) - counts["unknown"]
        out[f"{prefix}_format_share"] = (counts[list(FORMAT_MODES)].sum(axis=1) / known.where(known > 0)).astype(float)
    return out.reset_index()


def behaviour(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed): share answered (answer-format adherence) and median reply length, each side."""
    cols = {}
    for side in ("before", "after"):
        cols[f"answered_{side}"] = answered(samples, side)
        cols[f"median_chars_{side}"] = _column(samples, f"response_chars_{side}", np.nan).astype(float).to_numpy()
    frame = pd.DataFrame(cols).assign(
        subtask=samples["subtask"].astype(str).to_numpy(), seed=samples["seed"].astype(str).to_numpy()
    )
    grouped = frame.groupby(["subtask", "seed"], sort=True)
    out = grouped[["answered_before", "answered_after"]].mean()
    out = out.join(grouped[["median_chars_before", "median_chars_after"]].median())
    return out.reset_index()
