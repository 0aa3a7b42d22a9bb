"""``postforget-pair show``: the items of one sub-benchmark that made a given transition.

Only samples.parquet is read in bulk; each listed item's question and responses are read back
from its logged sample (file and byte offset kept in samples.parquet), one line per item.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from postforget_lmeval.results import TRANSITIONS, PairingError
from postforget_lmeval.samples import option_letter, read_sample

QUESTION_KEYS = ("pf_question", "question", "Question", "query", "problem", "input", "goal", "ctx", "sentence", "text")
OPTION_KEYS = ("pf_options", "choices", "options", "endings")
RESPONSE_TAIL = 600  # characters of a response shown by `show --responses` (the answer is at its end)


def _question(doc: dict[str, Any], sample: dict[str, Any]) -> str:
    """The item as a reader wants it: question and options from the doc, else the prompt's end."""
    text = next((doc[k] for k in QUESTION_KEYS if isinstance(doc.get(k), str)), None)
    if text is None:
        args = sample.get("arguments") or {}
        prompt = ((args.get("gen_args_0") or {}).get("arg_0")) if isinstance(args, dict) else None
        return str(prompt or "")[-1500:]
    options = next((doc[k] for k in OPTION_KEYS if isinstance(doc.get(k), list)), None)
    if options and all(isinstance(o, str) for o in options):
        text += "\n" + "\n".join(f"{option_letter(i)}) {o}" for i, o in enumerate(options))
    return text


def _response(sample: dict[str, Any], replicate: int) -> str:
    """The end of the generation (where the answer is), or the options' log-likelihoods of a multiple-choice sample."""
    resps = sample.get("resps") or []
    try:
        value = resps[0][replicate] if isinstance(resps[0], list) else resps[0]
    except (IndexError, TypeError):
        return ""
    if isinstance(value, list):  # [loglik, is_greedy] per option
        try:
            return "log-likelihoods " + ", ".join(
                f"{option_letter(i)} {float(r[0][0]):.2f}" for i, r in enumerate(resps)
            )
        except (TypeError, ValueError, IndexError):
            return json.dumps(resps, ensure_ascii=False)[:RESPONSE_TAIL]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ("…" + text[-RESPONSE_TAIL:]) if len(text) > RESPONSE_TAIL else text


def _load_sample(path: str, offset: int, doc_id: int) -> dict[str, Any]:
    try:
        sample = read_sample(path, int(offset))
    except (OSError, ValueError) as e:
        raise PairingError(
            f"cannot read the logged sample at byte {offset} of {path} ({e}): "
            "the samples file moved or changed since pairing; re-run postforget-pair"
        ) from e
    if sample.get("doc_id") != doc_id:
        raise PairingError(
            f"{path} changed since pairing (byte {offset} is not doc_id {doc_id}); re-run postforget-pair"
        )
    return sample


def show_items(
    out_dir: str | os.PathLike[str],
    subtask: str,
    transition: str = "1->0",
    seed: str | None = None,
    limit: int | None = 20,
    responses: bool = False,
) -> list[dict[str, Any]]:
    """The items of one sub-benchmark that made ``transition``, with question, gold and both answers."""
    path = Path(out_dir) / "samples.parquet"
    if not path.is_file():
        raise PairingError(f"{path} not found: run `postforget-pair BEFORE AFTER -o {out_dir}` first")
    if transition not in TRANSITIONS.values():
        raise PairingError(f"--transition must be one of {', '.join(TRANSITIONS.values())}, not {transition!r}")
    df = pd.read_parquet(path, filters=[("subtask", "==", subtask)])
    if df.empty:
        names = pd.read_parquet(path, columns=["subtask"])["subtask"].astype(str).unique().tolist()
        close = difflib.get_close_matches(subtask, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; sub-benchmarks: {', '.join(sorted(names)[:20])}"
        raise PairingError(f"no sub-benchmark {subtask!r} in {path}{hint}")
    df = df[df["transition"].astype(str) == transition]
    if seed is not None:
        seeds = df["seed"].astype(str)
        if not (seeds == str(seed)).any():
            raise PairingError(
                f"no seed {seed} for {subtask} with transition {transition}; seeds: {', '.join(sorted(seeds.unique()))}"
            )
        df = df[seeds == str(seed)]
    df = df.sort_values(["seed", "doc_id"]).head(limit) if limit else df.sort_values(["seed", "doc_id"])
    items = []
    for r in df.itertuples(index=False):
        before = _load_sample(str(r.file_before), r.offset_before, r.doc_id)
        item = {
            "subtask": subtask,
            "doc_id": int(r.doc_id),
            "seed": str(r.seed),
            "transition": transition,
            "question": _question(before.get("doc") or {}, before),
            "gold": r.gold,
            "answer_before": r.answer_before,
            "answer_after": r.answer_after,
            "status_before": r.status_before,
            "status_after": r.status_after,
        }
        if responses:
            after = _load_sample(str(r.file_after), r.offset_after, r.doc_id)
            item["response_before"] = _response(before, int(r.replicate))
            item["response_after"] = _response(after, int(r.replicate))
        items.append(item)
    return items
