"""Why an item was forgotten: the failure mode of the wrong side of every 1->0 and 0->1 item.

For a 1->0 item the after side is wrong, for a 0->1 item the before side; its mode is one of

* ``wrong``: an answer that is one of the options, but not the gold one (knowledge);
* ``invalid``: an answer outside the item's options (format);
* ``cut``: the generation stopped at the token limit: an unclosed ``<think>`` (status ``unfinished``),
  or no answer and a reply at least ``CUT_CHARS_PER_TOKEN x max_gen_toks`` characters long (format);
* ``refusal``: no answer, and the reply refuses by the rule of :mod:`postforget_lmeval.scoring.refusal` (format);
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

from postforget_lmeval.analyses._knowledge import KEPT, LOST
from postforget_lmeval.pairing import SIDES
from postforget_lmeval.scoring.refusal import is_refusal
from postforget_lmeval.sources import UNREADABLE

MODES = ("wrong", "invalid", "no_answer", "cut", "refusal", "unknown")
FORMAT_MODES = ("invalid", "no_answer", "cut", "refusal")
CUT_CHARS_PER_TOKEN = 2.0
LMEVAL_NO_MATCH = "[invalid]"  # lm-eval's regex filter fallback
_STATUS_MODES = {
    "answered": "wrong",
    "no_answer": "no_answer",
    "unfinished": "cut",
    "invalid": "invalid",
    "refused": "refusal",
}
"""Extraction status of the wrong side -> its mode; any other status is ``unknown``."""
DIRECTIONS = {"1->0": ("F", "after"), "0->1": ("BT", "before")}
"""transition -> (prefix of its columns, the side that is wrong)."""
COUNT_COLUMNS = tuple(f"n_{t.replace('->', '')}_{m}" for t in DIRECTIONS for m in MODES)
"""The per-mode counts of :func:`mode_counts`, 1->0 then 0->1."""
KNOWLEDGE_SPLIT = (KEPT, LOST)
KNOWLEDGE_COLUMNS = tuple(f"n_10_{m}_{k}" for m in MODES for k in KNOWLEDGE_SPLIT)
"""With log-likelihood twins: the 1->0 items of each mode whose knowledge was kept or lost (samples' ``knowledge``),
so a ``wrong`` or unanswered reply says whether the after model still ranks the gold option first."""
LoadItem = Callable[[str, int], Any]
"""``load_item(file, locator)`` of the input sources: the logged item, its replies in ``.responses``."""


def _column(samples: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    """Column ``name``, or ``default`` in every row where the log has no such column."""
    return samples[name] if name in samples else pd.Series(default, index=samples.index, dtype=object)


def _equals(column: pd.Series, value: str) -> np.ndarray:
    """Per row: whether ``column`` holds ``value`` (False where it is missing)."""
    return column.eq(value).fillna(False).to_numpy(dtype=bool)


def _has_options(values: pd.Series) -> np.ndarray:
    """Per row: whether it logs a non-empty list of options (generative items log none)."""
    return np.array([isinstance(v, (list, tuple, np.ndarray)) and len(v) > 0 for v in values], dtype=bool)


def answered(samples: pd.DataFrame, side: str) -> np.ndarray:
    """Per item: 1.0 answered, 0.0 not (invalid, no answer, cut, refused), NaN when the log does not say.

    Without a status, logged options mean an answer (log-likelihood multiple choice); lm-eval's no-match
    fallback tells answered from not in the (sub-benchmark, seed) groups where it occurs.
    """
    status = _column(samples, f"status_{side}")
    unknown = status.isna().to_numpy()
    out = np.where(unknown, np.nan, _equals(status, "answered").astype(float))
    out[unknown & _has_options(_column(samples, f"option_ll_{side}"))] = 1.0
    answer = _column(samples, f"answer_{side}")
    no_match = unknown & _equals(answer, LMEVAL_NO_MATCH)
    if no_match.any():
        groups = [samples["subtask"], samples["seed"]]
        uses_fallback = pd.Series(no_match, index=samples.index).groupby(groups, observed=True).transform("any")
        judged = unknown & answer.notna().to_numpy() & uses_fallback.to_numpy(dtype=bool)
        out[judged] = ~_equals(answer, LMEVAL_NO_MATCH)[judged]
    return out


def _wrong_side(samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], transition: str) -> pd.DataFrame:
    """The items of ``transition``, their wrong side's mode as the log tells it, its reply's logged length, its
    run's ``max_gen_toks`` (``limit``) and where its reply can be read back (file, locator, replicate)."""
    side = DIRECTIONS[transition][1]
    items = samples[_equals(samples["transition"].astype(str), transition)]
    status = _column(items, f"status_{side}")
    mode = np.array([_STATUS_MODES.get(s, "unknown") for s in status], dtype=object)  # a missing status too
    no_status = status.isna().to_numpy()
    mode[no_status & _has_options(_column(items, f"option_ll_{side}"))] = "wrong"
    mode[no_status & _equals(_column(items, f"answer_{side}"), LMEVAL_NO_MATCH)] = "no_answer"
    files = _column(items, f"file_{side}").astype(object)
    return pd.DataFrame(
        {
            **{key: items[key].to_numpy() for key in ("subtask", "category", "seed", "doc_id")},
            "transition": transition,
            "side": side,
            "mode": mode,
            "response_chars": _column(items, f"response_chars_{side}", np.nan).astype(float).to_numpy(),
            "limit": np.array([max_gen_toks.get(str(f)) for f in files], dtype=float),
            "file": files.where(files.notna(), None).to_numpy(),
            "locator": _column(items, f"locator_{side}").to_numpy(),
            "replicate": _column(items, "replicate", 0).fillna(0).to_numpy(),
            "knowledge": _column(items, "knowledge", "").fillna("").to_numpy(dtype=object),
        }
    )


def _read_back(wanted: pd.DataFrame, load_item: LoadItem) -> list[tuple[int, bool] | None]:
    """Per wanted reply: its length in characters and whether it refuses; None where it cannot be read. The
    replicates of an item share its logged line, read once."""
    logged: dict[tuple[str, int], list[str] | None] = {}
    out: list[tuple[int, bool] | None] = []
    for file, locator, rep in zip(wanted["file"], wanted["locator"], wanted["replicate"]):
        key = (str(file), int(locator))
        if key not in logged:
            try:
                logged[key] = list(load_item(*key).responses)
            except UNREADABLE:
                logged[key] = None
        responses = logged[key]
        if responses is None:
            out.append(None)
            continue
        reply = responses[int(rep)] if int(rep) < len(responses) else ""
        out.append((len(reply), is_refusal(reply)))
    return out


def item_modes(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], load_item: LoadItem | None
) -> pd.DataFrame:
    """The mode of every 1->0 and 0->1 item: subtask, category, seed, doc_id, transition, side, mode,
    response_chars (logged, else read back; NaN where neither), knowledge (samples' label, '' without). Its
    ``attrs`` count the replies read back (``loaded``) and those that could not be (``unreadable``).

    ``max_gen_toks``: per samples file of the wrong side. ``load_item`` reads back the replies without an
    answer that are not already ``cut`` by status or logged length (a refusal? its length when the log has
    none); a reply that cannot be read stays ``no_answer``. Without ``load_item`` none is read.
    """
    items = pd.concat([_wrong_side(samples, max_gen_toks, t) for t in DIRECTIONS], ignore_index=True)
    mode, chars = items["mode"].to_numpy(copy=True), items["response_chars"].to_numpy(copy=True)
    bound = CUT_CHARS_PER_TOKEN * items["limit"].to_numpy()
    unanswered = mode == "no_answer"
    wanted = np.flatnonzero(unanswered & ~(chars >= bound) & items["file"].notna().to_numpy())
    verdicts = _read_back(items.iloc[wanted], load_item) if load_item is not None else []
    for i, verdict in zip(wanted, verdicts):
        if verdict is None:
            continue
        length, refuses = verdict
        if np.isnan(chars[i]):  # the log has no length: the reply read back gives it
            chars[i] = length
        if refuses:
            mode[i] = "refusal"
    mode[unanswered & (mode == "no_answer") & (chars >= bound)] = "cut"
    out = items.drop(columns=["limit", "file", "locator", "replicate"]).assign(mode=mode, response_chars=chars)
    loaded = sum(verdict is not None for verdict in verdicts)
    out.attrs.update(loaded=loaded, unreadable=len(verdicts) - loaded)
    return out


def mode_counts(modes: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """One row per row of ``keys`` (subtask, seed as text): ``n_10_<mode>`` and ``n_01_<mode>`` counts of
    :func:`item_modes`' table and the format shares.

    ``F_format_share`` = format failures / (1->0 items whose mode is known); NaN without such items.
    ``BT_format_share`` likewise for the before side of 0->1 items. Where any item has a knowledge label (twins ran),
    also :data:`KNOWLEDGE_COLUMNS`.
    """
    column = "n_" + modes["transition"].str.replace("->", "") + "_" + modes["mode"]
    counts = (
        pd.crosstab([modes["subtask"].astype(str), modes["seed"].astype(str)], column)
        .reindex(index=pd.MultiIndex.from_frame(keys[["subtask", "seed"]]), columns=list(COUNT_COLUMNS), fill_value=0)
        .reset_index(drop=True)
        .astype(np.int64)
    )
    out = {}
    for transition, (prefix, _) in DIRECTIONS.items():
        tag = "n_" + transition.replace("->", "")
        of = counts[[f"{tag}_{m}" for m in MODES]]
        out |= dict(of.items())
        known = of.sum(axis=1) - of[f"{tag}_unknown"]
        # without items of a known mode the format count is 0 too: 0 / 0 is NaN
        out[f"{prefix}_format_share"] = of[[f"{tag}_{m}" for m in FORMAT_MODES]].sum(axis=1) / known
    if "knowledge" in modes and modes["knowledge"].isin(KNOWLEDGE_SPLIT).any():
        split = modes[modes["knowledge"].isin(KNOWLEDGE_SPLIT)]
        column = "n_10_" + split["mode"] + "_" + split["knowledge"]
        out |= dict(
            pd.crosstab([split["subtask"].astype(str), split["seed"].astype(str)], column)
            .reindex(
                index=pd.MultiIndex.from_frame(keys[["subtask", "seed"]]),
                columns=list(KNOWLEDGE_COLUMNS),
                fill_value=0,
            )
            .reset_index(drop=True)
            .astype(np.int64)
            .items()
        )
    return pd.DataFrame(out)


def behaviour(samples: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """One row per row of ``keys`` (subtask, seed as text): the share answered (answer-format adherence) and
    the median reply length, each side; NaN where the log does not say."""
    sides = SIDES
    frame = pd.DataFrame(
        {
            "subtask": samples["subtask"].astype(str).to_numpy(),
            "seed": samples["seed"].astype(str).to_numpy(),
            **{f"answered_{side}": answered(samples, side) for side in sides},
            **{
                f"median_chars_{side}": _column(samples, f"response_chars_{side}", np.nan).astype(float).to_numpy()
                for side in sides
            },
        }
    )
    grouped = frame.groupby(["subtask", "seed"])
    out = pd.concat(
        [
            grouped[[f"answered_{side}" for side in sides]].mean(),
            grouped[[f"median_chars_{side}" for side in sides]].median(),
        ],
        axis=1,
    )
    return out.reindex(pd.MultiIndex.from_frame(keys[["subtask", "seed"]])).reset_index(drop=True)
