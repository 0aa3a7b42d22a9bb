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

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval import background
from postforget_lmeval.keys import text_groups
from postforget_lmeval.refusal import is_refusal
from postforget_lmeval.sources.base import responses_one_by_one

MODES = ("wrong", "invalid", "no_answer", "cut", "refusal", "unknown")
FORMAT_MODES = ("invalid", "no_answer", "cut", "refusal")
CUT_CHARS_PER_TOKEN = 2.0
LMEVAL_NO_MATCH = "[invalid]"  # lm-eval's regex filter fallback
_UNANSWERED = {"no_answer": "no_answer", "unfinished": "cut", "invalid": "invalid", "refused": "refusal"}
DIRECTIONS = {"1->0": ("F", "after"), "0->1": ("BT", "before")}
"""transition -> (prefix of its columns, the side that is wrong)."""
_WRONG, _NO_ANSWER, _CUT, _REFUSAL, _UNKNOWN = map(MODES.index, ("wrong", "no_answer", "cut", "refusal", "unknown"))


def _mode_of(status: Any) -> str:
    if not isinstance(status, str):
        return "unknown"
    return "wrong" if status == "answered" else _UNANSWERED.get(status, "unknown")


def _modes_of(status: pd.Series) -> np.ndarray:
    """The position in MODES of :func:`_mode_of` of every status, computed once per distinct status."""
    codes, uniques = pd.factorize(status)
    return np.array([*(MODES.index(_mode_of(u)) for u in uniques), _UNKNOWN])[codes]  # code -1: missing


def _has_options(samples: pd.DataFrame, name: str, rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows``: whether column ``name`` logs a non-empty list of options there (generative items
    log none, and then the column may be absent)."""
    if name not in samples:
        return np.zeros(len(rows), dtype=bool)
    values = samples[name].to_numpy()[rows]
    return np.array([isinstance(v, (list, tuple, np.ndarray)) and len(v) > 0 for v in values], dtype=bool)


def _column(samples: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    return samples[name] if name in samples else pd.Series(default, index=samples.index, dtype=object)


def _values(samples: pd.DataFrame, name: str, rows: np.ndarray, default: Any = None) -> np.ndarray:
    """Column ``name`` at ``rows`` (``default`` where the column is absent), as a numpy array."""
    if name not in samples:
        return np.full(len(rows), default, dtype=object)
    return samples[name].iloc[rows].to_numpy()


def _no_match(samples: pd.DataFrame, side: str, rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows``: whether the logged answer of ``side`` is lm-eval's no-match fallback."""
    if f"answer_{side}" not in samples:
        return np.zeros(len(rows), dtype=bool)
    return _values(samples, f"answer_{side}", rows).astype(object) == LMEVAL_NO_MATCH


def answered(samples: pd.DataFrame, side: str) -> np.ndarray:
    """Per item: 1.0 answered, 0.0 not (invalid, no answer, cut, refused), NaN when the log does not say."""
    status = _column(samples, f"status_{side}")
    known = status.notna().to_numpy()
    out = np.where(known, (status == "answered").to_numpy(dtype=float), np.nan)
    unknown = np.flatnonzero(~known)  # items without a status: their options or answers tell
    out[unknown[_has_options(samples, f"option_ll_{side}", unknown)]] = 1.0
    no_match = _no_match(samples, side, unknown)
    if no_match.any():
        groups, _ = text_groups(samples, ["subtask", "seed"])
        with_answer = unknown[_column(samples, f"answer_{side}").notna().to_numpy()[unknown]]
        uses_fallback = with_answer[np.isin(groups[with_answer], groups[unknown[no_match]])]
        out[uses_fallback] = (_values(samples, f"answer_{side}", uses_fallback).astype(object) != LMEVAL_NO_MATCH)
    return out


Reply = tuple[str, int, int]
"""An unanswered reply to read back: (samples file, locator, replicate)."""
Replies = dict[Reply, "tuple[int, bool] | None"]
"""Reply -> (its length in characters, whether it refuses), None where it could not be read."""
LoadResponses = Callable[[str, Sequence[int]], "list[list[str] | None]"]
"""``load_responses(file, locators)`` of the input sources (:meth:`~postforget_lmeval.sources.base.Source.load_responses`)."""
BACKGROUND_MIN_REPLIES = 300  # replies to read back below which a process costs more than it saves


def _wrong_side(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], transition: str, side: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Reply | None]]:
    """For the items of ``transition``: rows, mode codes from the log, response chars, generation budget
    and, per item of mode no_answer (``np.flatnonzero(mode == _NO_ANSWER)``), its reply (None: no file)."""
    rows = np.flatnonzero(samples["transition"] == transition)  # no conversion of the column to text
    status = _column(samples, f"status_{side}").take(rows)
    mode = _modes_of(status)  # positions in MODES, until the frame is built
    no_status = np.flatnonzero(status.isna().to_numpy())
    mode[no_status[_has_options(samples, f"option_ll_{side}", rows[no_status])]] = _WRONG
    mode[no_status[_no_match(samples, side, rows[no_status])]] = _NO_ANSWER
    chars = _column(samples, f"response_chars_{side}", np.nan).to_numpy(dtype=float)[rows]
    at = rows[mode == _NO_ANSWER]  # only these need their run's budget and maybe their reply
    files = _values(samples, f"file_{side}", at)
    limit = np.array([max_gen_toks.get(str(f)) for f in files], dtype=float)
    locators = _values(samples, f"locator_{side}", at)
    replicates = _values(samples, "replicate", at, 0)
    replies = [
        None if file is None else (str(file), int(locator), 0 if pd.isna(rep) else int(rep))
        for file, locator, rep in zip(files, locators, replicates)
    ]
    return rows, mode, chars, limit, replies


def _needs_reading(chars: float, limit: float) -> bool:
    """An unanswered reply is read back unless its logged length already shows it was cut."""
    return not chars >= CUT_CHARS_PER_TOKEN * limit


def replies_to_read(samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None]) -> list[Reply]:
    """The replies :func:`item_modes` reads back: unanswered, not cut by their logged length."""
    out = []
    for transition, (_, side) in DIRECTIONS.items():
        _, mode, chars, limit, replies = _wrong_side(samples, max_gen_toks, transition, side)
        todo = np.flatnonzero(mode == _NO_ANSWER)
        out += [r for i, lim, r in zip(todo, limit, replies) if r is not None and _needs_reading(chars[i], lim)]
    return out


def read_replies(wanted: list[Reply], load_responses: LoadResponses) -> Replies:
    """Length and refusal verdict of each wanted reply, read back with ``load_responses``: one call per file
    (a source then reads each file once for all its replies)."""
    locators: dict[str, dict[int, None]] = {}  # file -> its lines, each once (repeats share a line)
    for file, locator, _ in wanted:
        locators.setdefault(file, {})[locator] = None
    responses = {
        (file, locator): got
        for file, of_file in locators.items()
        for locator, got in zip(of_file, load_responses(file, list(of_file)))
    }
    out: Replies = {}
    for file, locator, rep in wanted:
        got = responses[(file, locator)]
        if got is None:
            out[(file, locator, rep)] = None
            continue
        reply = got[rep] if rep < len(got) else ""
        out[(file, locator, rep)] = (len(reply), is_refusal(reply))
    return out


def replies_in_background(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], load_responses: LoadResponses
) -> Callable[[], Replies]:
    """:func:`read_replies` of :func:`replies_to_read`, in a forked process when there are many; call the
    returned function to wait for them."""
    wanted = replies_to_read(samples, max_gen_toks)
    return background.in_background(
        lambda: read_replies(wanted, load_responses), worth_it=len(wanted) >= BACKGROUND_MIN_REPLIES
    )


def item_modes(
    samples: pd.DataFrame,
    max_gen_toks: Mapping[str, int | None],
    load_item: Callable[[str, int], Any] | None,
    replies: Replies | None = None,
) -> pd.DataFrame:
    """The mode of every 1->0 and 0->1 item: subtask, category, seed, doc_id, transition, side, mode,
    response_chars (transition, side and mode categorical).

    ``max_gen_toks``: per samples file of the wrong side. ``load_item`` reads back the items without an
    answer that are not already ``cut`` by status or length (their reply: a refusal? its length when the
    log has none), unless ``replies`` already holds them (:func:`replies_in_background`); an item that
    cannot be read stays ``no_answer``. The frame's ``attrs`` count the items read back (``loaded``) and
    those that could not be (``unreadable``).
    """
    if replies is None:
        replies = (
            read_replies(replies_to_read(samples, max_gen_toks), partial(responses_one_by_one, load_item))
            if load_item is not None
            else {}
        )
    frames, loaded, unreadable = [], 0, 0
    for transition, (_, side) in DIRECTIONS.items():
        rows, mode, chars, limit, wanted = _wrong_side(samples, max_gen_toks, transition, side)
        for i, limit_i, reply in zip(np.flatnonzero(mode == _NO_ANSWER), limit, wanted):
            if _needs_reading(chars[i], limit_i) and reply is not None and reply in replies:
                verdict = replies[reply]
                if verdict is None:
                    unreadable += 1
                    continue
                loaded += 1
                if np.isnan(chars[i]):
                    chars[i] = verdict[0]
                if verdict[1]:
                    mode[i] = _REFUSAL
            if mode[i] == _NO_ANSWER and chars[i] >= CUT_CHARS_PER_TOKEN * limit_i:
                mode[i] = _CUT
        frames.append(
            samples[["subtask", "category", "seed", "doc_id"]].take(rows).assign(
                transition=_categorical(transition, list(DIRECTIONS), len(rows)),
                side=_categorical(side, ["after", "before"], len(rows)),
                mode=pd.Categorical.from_codes(mode, categories=MODES),
                response_chars=chars,
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(loaded=loaded, unreadable=unreadable)
    return out


def _categorical(value: str, categories: list[str], n: int) -> pd.Categorical:
    """``value`` repeated ``n`` times, as a categorical (cheap to build, compare and concatenate)."""
    return pd.Categorical.from_codes(np.full(n, categories.index(value)), categories=categories)


def mode_counts(modes: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed) of ``keys``: ``n_10_<mode>`` and ``n_01_<mode>`` counts and the format shares.

    ``F_format_share`` = format failures / (1->0 items whose mode is known); NaN without such items.
    ``BT_format_share`` likewise for the before side of 0->1 items.
    """
    rows = keys[["subtask", "seed"]].astype(str).drop_duplicates().reset_index(drop=True)
    groups, names = text_groups(modes, ["subtask", "seed"])
    row_of_group = pd.MultiIndex.from_frame(rows).get_indexer(pd.MultiIndex.from_frame(names))
    at = np.append(row_of_group, -1)[groups]  # the output row of every item; -1: none
    mode = pd.Categorical(modes["mode"], categories=MODES).codes  # -1: not a mode (not counted)
    transition = pd.Categorical(modes["transition"], categories=list(DIRECTIONS)).codes
    fmt = np.isin(np.array(MODES), FORMAT_MODES)
    out = {}
    for code, (transition_name, (prefix, _)) in enumerate(DIRECTIONS.items()):
        sel = (transition == code) & (at >= 0) & (mode >= 0)
        counts = np.bincount(at[sel] * len(MODES) + mode[sel], minlength=len(rows) * len(MODES))
        counts = counts.reshape(len(rows), len(MODES)).astype(int)
        tag = "n_" + transition_name.replace("->", "")
        out |= {f"{tag}_{m}": counts[:, j] for j, m in enumerate(MODES)}
        known = counts.sum(axis=1) - counts[:, MODES.index("unknown")]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{prefix}_format_share"] = np.where(known > 0, counts[:, fmt].sum(axis=1) / known, np.nan)
    return rows.join(pd.DataFrame(out))


def behaviour(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed): share answered (answer-format adherence) and median reply length, each side."""
    cols = {}
    for side in ("before", "after"):
        cols[f"answered_{side}"] = answered(samples, side)
        cols[f"median_chars_{side}"] = _column(samples, f"response_chars_{side}", np.nan).to_numpy(dtype=float)
    groups, names = text_groups(samples, ["subtask", "seed"])
    grouped = pd.DataFrame(cols)[groups >= 0].groupby(groups[groups >= 0], sort=True)  # group i: row i of names
    out = grouped[["answered_before", "answered_after"]].mean()
    return names.join(out.join(grouped[["median_chars_before", "median_chars_after"]].median()))
