"""``postforget-pair show``: the items of one sub-benchmark that made a given transition.

Only samples.parquet is read in bulk; each listed item's question and responses are read back by
its input source (``load_item`` with the file and locator kept in samples.parquet), one item at a time.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from postforget_lmeval import sources
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.pairing import SIDES
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.pairing.run_plan import listing
from postforget_lmeval.report.html import KNOWLEDGE_CARD, item_text
from postforget_lmeval.scoring import option_letter
from postforget_lmeval.sources import LoadedItem

RESPONSE_TAIL = 600  # characters of a response shown by `show --responses` (the answer is at its end)


def _gold(gold: Any, item: LoadedItem) -> Any:
    """The gold answer as its option's letter where lm-eval logged it as the option's text (COPA's target)."""
    text = str(gold).strip().lower()
    letters = [option_letter(i) for i, o in enumerate(item.options) if o.strip().lower() == text]
    return letters[0] if len(letters) == 1 else gold


def _response(item: LoadedItem, replicate: int) -> str:
    """The end of one replicate's response (where the answer is)."""
    if not item.responses:
        return ""
    text = item.responses[replicate] if replicate < len(item.responses) else item.responses[0]
    return ("…" + text[-RESPONSE_TAIL:]) if len(text) > RESPONSE_TAIL else text


def _load(source: str, path: str, locator: int, doc_id: int) -> LoadedItem:
    try:
        item = sources.by_name(source).load_item(path, int(locator))
    except OSError as e:
        raise PairingError(
            f"cannot read the logged item at {locator} of {path} ({e}): the file moved or cannot be read; "
            "restore it, or re-run postforget-pair"
        ) from e
    except (ValueError, IndexError, KeyError) as e:
        raise PairingError(
            f"the logged item at {locator} of {path} cannot be read back ({e}): the file changed since pairing; "
            "re-run postforget-pair"
        ) from e
    if item.doc_id is not None and item.doc_id != doc_id:
        raise PairingError(f"{path} changed since pairing ({locator} is not doc_id {doc_id}); re-run postforget-pair")
    return item


def show_items(
    out_dir: str | os.PathLike[str],
    subtask: str,
    transition: str = "1->0",
    seed: str | None = None,
    limit: int | None = 20,
    responses: bool = False,
) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` items of one sub-benchmark that made ``transition``, with question, gold and both
    answers, its knowledge label where a log-likelihood twin ran beside it ('' otherwise), and how many made it
    in all."""
    path = Path(out_dir) / "samples.parquet"
    if not path.is_file():
        raise PairingError(_not_a_pair_folder(Path(out_dir)))
    transition = transition_of(transition)
    try:
        df = pd.read_parquet(path, filters=[("subtask", "==", subtask)])
        names = [] if not df.empty else pd.read_parquet(path, columns=["subtask"])["subtask"].astype(str).unique()
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise PairingError(f"cannot read {path} ({e}): re-run postforget-pair to write it again") from e
    if df.empty:
        names = list(names)
        close = difflib.get_close_matches(subtask, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; sub-benchmarks: {listing(sorted(names), 20)}"
        raise PairingError(f"no sub-benchmark {subtask!r} in {path}{hint}")
    df = df[df["transition"].astype(str) == transition]
    if seed is not None:
        seeds = df["seed"].astype(str)
        if not (seeds == str(seed)).any():
            raise PairingError(
                f"no seed {seed} for {subtask} with transition {transition}; seeds: {', '.join(sorted(seeds.unique()))}"
            )
        df = df[seeds == str(seed)]
    total = len(df)
    df = df.sort_values(["seed", "doc_id"]).head(limit) if limit else df.sort_values(["seed", "doc_id"])
    items = []
    for r in df.itertuples(index=False):
        before = _load(str(r.source_before), str(r.file_before), r.locator_before, r.doc_id)
        item = {
            "subtask": subtask,
            "doc_id": int(r.doc_id),
            "seed": str(r.seed),
            "transition": transition,
            "question": item_text(before),
            "gold": _gold(r.gold, before),
            "answer_before": r.answer_before,
            "answer_after": r.answer_after,
            "status_before": r.status_before,
            "status_after": r.status_after,
            "knowledge": getattr(r, "knowledge", "") or "",
        }
        if responses:
            after = _load(str(r.source_after), str(r.file_after), r.locator_after, r.doc_id)
            item["response_before"] = _response(before, int(r.replicate))
            item["response_after"] = _response(after, int(r.replicate))
        items.append(item)
    return items, total


NAMES = {"1->0": "forgotten", "0->1": "gained", "1->1": "kept", "0->0": "never"}
"""Each transition's word: ``--transition forgotten`` needs no quotes (an unquoted ``0->1`` is a shell redirection)."""


def transition_of(value: str) -> str:
    """``1->0`` from ``1->0``, ``10`` or ``forgotten`` (and so on for the others); an error naming them otherwise."""
    aliases = {**{t: t for t in NAMES}, **{t.replace("->", ""): t for t in NAMES}, **{w: t for t, w in NAMES.items()}}
    if value.strip().lower() in aliases:
        return aliases[value.strip().lower()]
    accepted = ", ".join(f"{w} ({t.replace('->', '')})" for t, w in NAMES.items())
    raise PairingError(f"--transition {value!r}: give one of {accepted}")


def _transition(value: str) -> str:
    try:
        return transition_of(value)
    except PairingError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--transition ")) from e


def _not_a_pair_folder(out_dir: Path) -> str:
    """What to do when ``out_dir`` holds no samples.parquet: the pair folders inside it (a multi, chain, curve or
    rescoring-sensitivity output), or how to make one."""
    inside = sorted(p.parent for p in out_dir.glob("*/samples.parquet")) + sorted(
        p.parent for p in out_dir.glob("*/*/samples.parquet")
    )
    if not inside:
        return f"{out_dir / 'samples.parquet'} not found: run `postforget-pair BEFORE AFTER -o {out_dir}` first"
    names = [str(p.relative_to(out_dir)) for p in inside]
    return (
        f"{out_dir} holds several pairings (a multi, chain, curve or --rescore a,b output), each in a folder of "
        f"its own: {listing(names, 12)}; show one of them, e.g. `postforget-pair show {inside[0]} --subtask NAME`"
    )


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a count: give 0 (all) or a positive number")
    return number


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair show",
        description="List the items of a sub-benchmark that were forgotten (or gained), "
        "with the question, gold answer and both models' answers.",
    )
    p.add_argument("out_dir", metavar="OUT_DIR", help="output directory of postforget-pair")
    p.add_argument("--subtask", required=True, help="sub-benchmark, as in subtasks.csv")
    p.add_argument(
        "--transition",
        default="1->0",
        type=_transition,
        metavar="WHICH",
        help="forgotten (or 10, '1->0'; the default), gained (01, '0->1'), kept (11), never (00)",
    )
    p.add_argument("--seed", help="only this seed label (as in subtasks.csv)")
    p.add_argument("--limit", type=_count, default=20, help="at most this many items (default 20; 0 for all)")
    p.add_argument("--responses", action="store_true", help="also print the end of both responses")
    return p


def command(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    out, err = consoles()
    try:
        items, total = show_items(
            args.out_dir, args.subtask, args.transition, args.seed, args.limit or None, args.responses
        )
    except PairingError as e:
        return failed(err, e)
    what = {**NAMES, "0->0": "never right"}[args.transition]
    shown = f"the first {len(items)} of " if len(items) < total else ""
    out.print(f"[bold]{shown}{total} {what} item(s) of {escape(args.subtask)}[/]")
    for it in items:
        out.rule(f"doc_id {it['doc_id']}  seed {escape(it['seed'])}")
        out.print(escape(it["question"]))
        out.print(
            f"[bold]gold:[/] {escape(str(it['gold']))}   [bold]before:[/] {escape(str(it['answer_before']))}"
            + (f" ({escape(str(it['status_before']))})" if it["status_before"] else "")
            + f"   [bold]after:[/] {escape(str(it['answer_after']))}"
            + (f" ({escape(str(it['status_after']))})" if it["status_after"] else "")
        )
        if it["knowledge"]:
            out.print(f"[bold]{escape(KNOWLEDGE_CARD[it['knowledge']])}[/] (log-likelihood twin)")
        for side in SIDES:
            if f"response_{side}" in it:
                out.print(f"[dim]{side} response:[/] {escape(it[f'response_{side}'])}")
    return 0
