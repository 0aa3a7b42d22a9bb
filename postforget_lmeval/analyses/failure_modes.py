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

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from postforget_lmeval.analyses import background
from postforget_lmeval.pairing.keys import text_groups
from postforget_lmeval.scoring.refusal import is_refusal
from postforget_lmeval.sources import responses_one_by_one

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
SECONDS_PER_REPLY = 35e-6  # CPU to read one back (bench pair, 2 cores: 0.11-0.135 s for 3,537 replies)


class _WrongSide(NamedTuple):
    """The items of one transition as the log shows their wrong side, before any reply is read back."""

    rows: np.ndarray  # positions in samples
    mode: np.ndarray  # positions in MODES
    chars: np.ndarray  # reply lengths, NaN where not logged
    unanswered: np.ndarray  # positions in ``rows`` of the items of mode no_answer
    limit: np.ndarray  # per unanswered item: its run's max_gen_toks, NaN where unknown
    replies: list[Reply | None]  # per unanswered item: its reply, None without a samples file

    def to_read(self) -> np.ndarray:
        """Positions in ``unanswered`` of the replies read back: not already cut by their logged length."""
        cut = self.chars[self.unanswered] >= CUT_CHARS_PER_TOKEN * self.limit
        return np.flatnonzero(~cut & np.array([r is not None for r in self.replies], dtype=bool))


class Modes(NamedTuple):
    """The mode of every 1->0 item, then of every 0->1 item (see :func:`modes_of`)."""

    rows: np.ndarray  # positions in samples
    transition: np.ndarray  # positions in DIRECTIONS
    mode: np.ndarray  # positions in MODES
    chars: np.ndarray  # reply lengths (logged, else read back), NaN where neither
    loaded: int  # replies read back
    unreadable: int  # replies that could not be read back


def _wrong_side(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], transition: str, side: str
) -> _WrongSide:
    """The items of ``transition`` seen from ``side``, their modes as the log tells them."""
    rows = np.flatnonzero(samples["transition"] == transition)  # no conversion of the column to text
    status = _column(samples, f"status_{side}").take(rows)
    mode = _modes_of(status)  # positions in MODES
    no_status = np.flatnonzero(status.isna().to_numpy())
    mode[no_status[_has_options(samples, f"option_ll_{side}", rows[no_status])]] = _WRONG
    mode[no_status[_no_match(samples, side, rows[no_status])]] = _NO_ANSWER
    chars = _column(samples, f"response_chars_{side}", np.nan).to_numpy(dtype=float)[rows]
    unanswered = np.flatnonzero(mode == _NO_ANSWER)  # only these need their run's budget and maybe their reply
    at = rows[unanswered]
    files = _values(samples, f"file_{side}", at)
    limit = np.array([max_gen_toks.get(str(f)) for f in files], dtype=float)
    locators = _values(samples, f"locator_{side}", at).tolist()
    replicates = _values(samples, "replicate", at, 0)
    replicates = np.where(pd.isna(replicates), 0, replicates).tolist()  # plain ints: no numpy scalar per item
    replies = [
        None if file is None else (str(file), int(locator), int(rep))
        for file, locator, rep in zip(files, locators, replicates)
    ]
    return _WrongSide(rows, mode, chars, unanswered, limit, replies)


def _wrong_sides(samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None]) -> list[_WrongSide]:
    """:func:`_wrong_side` of each transition of DIRECTIONS."""
    return [_wrong_side(samples, max_gen_toks, transition, side) for transition, (_, side) in DIRECTIONS.items()]


def _wanted(sides: list[_WrongSide]) -> list[Reply]:
    return [side.replies[i] for side in sides for i in side.to_read()]  # type: ignore[misc] - to_read: not None


def replies_to_read(samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None]) -> list[Reply]:
    """The replies :func:`item_modes` reads back: unanswered, not cut by their logged length."""
    return _wanted(_wrong_sides(samples, max_gen_toks))


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


def _decided(side: _WrongSide, replies: Replies) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Mode codes and reply lengths of one side's items once the replies read back are known, and how many
    were read back and could not be: a refusal is ``refusal``, a reply without a logged length gets the one
    read back, and an unanswered reply at least ``CUT_CHARS_PER_TOKEN x max_gen_toks`` long is ``cut``; a
    reply that could not be read stays ``no_answer``."""
    mode, chars = side.mode.copy(), side.chars.copy()
    asked = [(i, replies[side.replies[i]]) for i in side.to_read() if side.replies[i] in replies]  # type: ignore[index]
    read = [(i, verdict) for i, verdict in asked if verdict is not None]
    at = side.unanswered[np.array([i for i, _ in read], dtype=np.int64)]
    lengths = np.array([length for _, (length, _) in read], dtype=float)
    chars[at] = np.where(np.isnan(chars[at]), lengths, chars[at])
    mode[at[np.array([refused for _, (_, refused) in read], dtype=bool)]] = _REFUSAL
    unanswered = side.unanswered
    cut = (mode[unanswered] == _NO_ANSWER) & (chars[unanswered] >= CUT_CHARS_PER_TOKEN * side.limit)
    mode[unanswered[cut]] = _CUT
    return mode, chars, len(read), len(asked) - len(read)


def _modes(sides: list[_WrongSide], replies: Replies) -> Modes:
    """:func:`_decided` of each side, in one :class:`Modes`."""
    decided = [_decided(side, replies) for side in sides]
    return Modes(
        np.concatenate([side.rows for side in sides]),
        np.concatenate([np.full(len(side.rows), i) for i, side in enumerate(sides)]),
        np.concatenate([mode for mode, _, _, _ in decided]),
        np.concatenate([chars for _, chars, _, _ in decided]),
        sum(loaded for _, _, loaded, _ in decided),
        sum(unreadable for _, _, _, unreadable in decided),
    )


def modes_in_background(
    samples: pd.DataFrame, max_gen_toks: Mapping[str, int | None], load_responses: LoadResponses, beside: float = 0.0
) -> Callable[[], Modes]:
    """:func:`modes_of`, its replies read back with ``load_responses`` in a forked process when there are many;
    call the returned function to wait for them. ``beside``: the expected CPU seconds of another step running
    meanwhile (the bootstrap's draws); a read-back expected to take less runs at :data:`background.YIELD`."""
    sides = _wrong_sides(samples, max_gen_toks)
    wanted = _wanted(sides)
    replies = background.in_background(
        lambda: read_replies(wanted, load_responses),
        worth_it=len(wanted) >= BACKGROUND_MIN_REPLIES,
        nice=background.YIELD if SECONDS_PER_REPLY * len(wanted) < beside else 0,
    )
    return lambda: _modes(sides, replies())


def modes_of(
    samples: pd.DataFrame,
    max_gen_toks: Mapping[str, int | None],
    load_item: Callable[[str, int], Any] | None,
    replies: Replies | None = None,
) -> Modes:
    """The mode of every 1->0 and 0->1 item.

    ``max_gen_toks``: per samples file of the wrong side. ``load_item`` reads back the items without an
    answer that are not already ``cut`` by status or length (their reply: a refusal? its length when the
    log has none), unless ``replies`` already holds them (:func:`read_replies`); an item that cannot be
    read stays ``no_answer``.
    """
    sides = _wrong_sides(samples, max_gen_toks)
    if replies is None:
        replies = (
            read_replies(_wanted(sides), partial(responses_one_by_one, load_item)) if load_item is not None else {}
        )
    return _modes(sides, replies)


def item_modes(
    samples: pd.DataFrame,
    max_gen_toks: Mapping[str, int | None],
    load_item: Callable[[str, int], Any] | None,
    replies: Replies | None = None,
) -> pd.DataFrame:
    """:func:`modes_of` as a table: subtask, category, seed, doc_id, transition, side, mode, response_chars
    (transition, side and mode categorical); its ``attrs`` count the items read back (``loaded``) and those
    that could not be (``unreadable``)."""
    modes = modes_of(samples, max_gen_toks, load_item, replies)
    out = samples[["subtask", "category", "seed", "doc_id"]].take(modes.rows).reset_index(drop=True)
    out = out.assign(
        transition=pd.Categorical.from_codes(modes.transition, categories=list(DIRECTIONS)),
        side=pd.Categorical.from_codes(modes.transition, categories=[side for _, side in DIRECTIONS.values()]),
        mode=pd.Categorical.from_codes(modes.mode, categories=MODES),
        response_chars=modes.chars,
    )
    out.attrs.update(loaded=modes.loaded, unreadable=modes.unreadable)
    return out


def mode_counts(modes: Modes, rows: np.ndarray, n_rows: int) -> pd.DataFrame:
    """Per output row: ``n_10_<mode>`` and ``n_01_<mode>`` counts and the format shares; ``rows``: the output
    row of each row of samples (-1: none), ``n_rows`` of them.

    ``F_format_share`` = format failures / (1->0 items whose mode is known); NaN without such items.
    ``BT_format_share`` likewise for the before side of 0->1 items.
    """
    at = rows[modes.rows]
    fmt = np.isin(np.array(MODES), FORMAT_MODES)
    out = {}
    for code, (transition_name, (prefix, _)) in enumerate(DIRECTIONS.items()):
        sel = (modes.transition == code) & (at >= 0)
        counts = np.bincount(at[sel] * len(MODES) + modes.mode[sel], minlength=n_rows * len(MODES))
        counts = counts.reshape(n_rows, len(MODES)).astype(int)
        tag = "n_" + transition_name.replace("->", "")
        out |= {f"{tag}_{m}": counts[:, j] for j, m in enumerate(MODES)}
        known = counts.sum(axis=1) - counts[:, MODES.index("unknown")]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{prefix}_format_share"] = np.where(known > 0, counts[:, fmt].sum(axis=1) / known, np.nan)
    return pd.DataFrame(out)


def behaviour(samples: pd.DataFrame, rows: np.ndarray, n_rows: int) -> pd.DataFrame:
    """Per output row: the share answered (answer-format adherence) and the median reply length, each side;
    ``rows``: the output row of each row of samples (-1: none), ``n_rows`` of them."""
    grouped = rows >= 0
    group = rows[grouped]
    out = {}
    for side in ("before", "after"):
        answers = answered(samples, side)[grouped]
        known = ~np.isnan(answers)
        total = np.bincount(group[known], weights=answers[known], minlength=n_rows)  # of 0s and 1s: exact
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"answered_{side}"] = total / np.bincount(group[known], minlength=n_rows)  # NaN where none
    chars = pd.DataFrame(
        {f"median_chars_{side}": _column(samples, f"response_chars_{side}", np.nan).to_numpy(dtype=float)[grouped]
         for side in ("before", "after")}
    )  # fmt: skip
    medians = chars.groupby(group, sort=True).median().reindex(range(n_rows))
    return pd.DataFrame(out).join(medians)
