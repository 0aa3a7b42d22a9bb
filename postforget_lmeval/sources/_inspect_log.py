"""Reading inspect_ai logs through inspect_ai's own reader: a log's header as a task run, its samples as items.

Only this module imports ``inspect_ai`` (the ``inspect`` extra); without it, every entry point raises a
PairingError that names the extra. What a sample says:

* the item is ``sample.id`` (unique within a task; an int keeps its value as ``doc_id``, a string is hashed),
  never the position in ``eval.dataset.sample_ids``, which follows each run's own shuffle;
* each epoch is a replicate (``sample.epoch`` counts from 1, the replicate from 0), never pooled:
  ``reductions`` (epoch means) are not read;
* correctness is a scorer's value: ``C`` is 1, ``I`` and ``N`` (no answer) are 0 and stay in n. The scorer is
  ``choice`` when logged, else the first whose every value is correct/incorrect.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from postforget_lmeval.errors import PairingError
from postforget_lmeval.sources._base import LoadedItem, Problem, ReadRequest, RunRead, TaskRun, item_rows
from postforget_lmeval.sources._lighteval_items import subtask_of

EXTRA = "pip install 'postforget-lmeval[inspect]'"
STREAM_BYTES = 32 << 20  # a larger .eval log is streamed, so memory does not grow with the log
SKIP_FIELDS = {"messages", "events", "store", "attachments"}  # large, and not needed to score an item
PREFERRED_SCORER = "choice"  # inspect_ai's multiple-choice scorer
_BINARY: dict[Any, int] = {"C": 1, "I": 0, "N": 0, True: 1, False: 0}  # 1, 0, 1.0 and 0.0 find True/False
_SHOTS_SUFFIX = "_shots"


class BadLog(ValueError):
    """A log pairing cannot use; the message says why and what to do."""


def _log_api(path: Path | str) -> Any:
    """``inspect_ai.log``, or a PairingError naming the extra when inspect_ai is not installed."""
    try:
        from inspect_ai import log
    except ImportError as e:
        raise PairingError(
            f"{path} is an inspect_ai evaluation log, but inspect_ai is not installed ({e}): {EXTRA}"
        ) from e
    return log


def subtask_and_category(task: str) -> tuple[str, str]:
    """The catalog's sub-benchmark of an inspect task: LightEval's inspect backend names a task after its
    config, with ``_<N>_shots`` added for few-shot runs, so that suffix goes before the LightEval mapping."""
    head, _, count = task.removesuffix(_SHOTS_SUFFIX).rpartition("_")
    return subtask_of(head if task.endswith(_SHOTS_SUFFIX) and count.isdigit() else task)


def _seed(header: Any) -> tuple[int | None, str]:
    if header.plan.config.seed is not None:
        return int(header.plan.config.seed), "plan.config.seed"
    if header.eval.model_generate_config.seed is not None:
        return int(header.eval.model_generate_config.seed), "eval.model_generate_config.seed"
    return None, "none logged (neither plan.config.seed nor eval.model_generate_config.seed)"


def task_run(path: Path) -> TaskRun:
    """The task run a log holds, read from its header; raises BadLog with what to do for a log of a newer format."""
    log = _log_api(path)
    try:
        header = log.read_eval_log(str(path), header_only=True)
    except ValueError as e:
        cause = str(e.__cause__ or e)  # inspect_ai wraps the reason in "Unable to read log file"
        if "version" not in cause:
            raise
        import inspect_ai

        raise BadLog(
            f"cannot be read by the installed inspect_ai {inspect_ai.__version__} ({cause}); the log was written "
            "by a newer inspect_ai: upgrade it (pip install -U inspect-ai)"
        ) from e
    spec = header.eval
    seed, seed_source = _seed(header)
    epochs = spec.config.epochs or 1
    ids = spec.dataset.sample_ids
    unusable = None
    if spec.config.log_samples is False:
        unusable = (
            "holds no samples (the run was made with --no-log-samples / log_samples=False): "
            "re-run the task without it to pair its items"
        )
    gen = header.plan.config.max_tokens or spec.model_generate_config.max_tokens
    scorers = tuple(s.name for s in (header.results.scores if header.results else []) or [])
    return TaskRun(
        task=spec.task, results_path=path, date=str(spec.created), samples_path=path, seed=seed,
        seed_source=seed_source, output_type="generate_until", filters=("none",), metrics=scorers, group=None,
        n_expected=len(ids) * epochs if ids else None, repeats=epochs, self_scored=True, max_gen_toks=gen,
        samples_bytes=path.stat().st_size, unusable=unusable,
    )  # fmt: skip


def _text(value: Any) -> str:
    """A sample's input as text: a string, or the text of its chat messages."""
    if isinstance(value, str):
        return value
    return "\n".join(m.text for m in value or [])


def _gold(target: Any) -> str:
    return "".join(target) if isinstance(target, list) else str(target)


def doc_id(sample_id: int | str) -> int:
    """The item's id as int64: an int id as it is, a string id by a stable hash."""
    if isinstance(sample_id, int):
        return sample_id
    return int(hashlib.sha256(str(sample_id).encode("utf-8")).hexdigest()[:15], 16)


def _doc_hash(sample: Any) -> str:
    doc = [_text(sample.input), list(sample.choices or []), _gold(sample.target)]
    return hashlib.sha256(json.dumps(doc, ensure_ascii=False).encode("utf-8")).hexdigest()


def _scorer(values: list[dict[str, Any]]) -> str | None:
    """The scorer pairing reads: ``choice`` if logged, else the first whose every value is binary."""
    names = list(dict.fromkeys(name for scores in values for name in scores))
    if PREFERRED_SCORER in names:
        return PREFERRED_SCORER
    for name in names:
        if all(_is_binary(scores.get(name)) for scores in values):
            return name
    return None


def _is_binary(value: Any) -> bool:
    return isinstance(value, (str, bool, int, float)) and value in _BINARY


def _status(value: Any, answer: str | None, stop_reason: str | None) -> str:
    if answer:
        return "answered"
    return "unfinished" if stop_reason == "max_tokens" and value != "N" else "no_answer"


def _samples(log: Any, path: str, size: int) -> Iterable[Any]:
    """The log's samples: read whole, or streamed one at a time from a large ``.eval`` log (slower, as
    inspect_ai opens the zip for each sample, but memory stays flat). inspect_ai's ``.json`` reader
    holds the whole log either way."""
    if path.endswith(".eval") and size > STREAM_BYTES:
        return log.read_eval_log_samples(path, all_samples_required=False, exclude_fields=SKIP_FIELDS)
    return log.read_eval_log(path, exclude_fields=SKIP_FIELDS).samples or []


def read_run(req: ReadRequest) -> RunRead:
    """Every sample of one log, one per item and epoch, in the log's order."""
    from postforget_lmeval.scoring.rescoring import rescore

    run, path = req.run, str(req.run.samples_path)
    log = _log_api(path)
    subtask, category = subtask_and_category(run.task)
    header = log.read_eval_log(path, header_only=True)
    ids = header.eval.dataset.sample_ids
    if ids is None:  # inspect_ai streams samples by this list; logs of old versions may lack it
        problem = Problem(path, f"lists no sample_ids, so inspect_ai cannot stream its samples; task {run.task} "
                          "skipped (reading the log with inspect_ai and writing it back adds them)")  # fmt: skip
        return RunRead(req, item_rows(run, path, {c: [] for c in ("doc_id", "doc_hash", "correct", "locator")}),
                       [problem])  # fmt: skip
    position = {str(i): n for n, i in enumerate(ids)}
    samples: list[dict[str, Any]] = []
    for s in _samples(log, path, run.samples_bytes):
        samples.append({
            "id": s.id, "epoch": s.epoch, "hash": _doc_hash(s), "choices": list(s.choices or []),
            "gold": _gold(s.target), "completion": s.output.completion if s.output else "",
            "stop": s.output.stop_reason if s.output else None, "scores": dict(s.scores or {}),
        })  # fmt: skip
    name = _scorer([{n: sc.value for n, sc in smp["scores"].items()} for smp in samples])
    problems: list[Problem] = []
    if samples and name is None:
        logged = ", ".join(sorted({n for smp in samples for n in smp["scores"]})) or "none"
        problems.append(Problem(
            path, f"task {run.task} has no multiple-choice scorer (one whose values are correct/incorrect; logged: "
            f"{logged}): score the task with inspect_ai's choice() (or another C/I scorer) to pair it", "no_metric",
            len(samples),
        ))  # fmt: skip
        samples = []
    cols: dict[str, list[Any]] = {c: [] for c in (
        "doc_id", "doc_hash", "replicate", "correct", "k", "answer", "gold", "status", "locator", "response_chars",
        "subtask", "category", *(("correct_logged",) if req.rescore else ()),
    )}  # fmt: skip
    skipped = not_rescored = 0
    for smp in samples:
        score = smp["scores"].get(name)
        if score is None or not _is_binary(score.value):
            skipped += 1
            continue
        logged = _BINARY[score.value]
        answer = score.answer or None
        status, correct = _status(score.value, answer, smp["stop"]), logged
        if req.rescore:
            if smp["choices"] and smp["gold"] and smp["completion"]:
                fmt = "letters" if len(smp["gold"]) > 1 else "letter"
                got = rescore(smp["completion"], smp["choices"], smp["gold"], fmt, req.rescore)
                answer, status, correct = got.answer, got.status, got.correct
            else:
                not_rescored += 1
            cols["correct_logged"].append(logged)
        for col, value in (
            ("doc_id", doc_id(smp["id"])), ("doc_hash", smp["hash"]), ("replicate", smp["epoch"] - 1),
            ("correct", correct), ("k", float(len(smp["choices"])) if smp["choices"] else math.nan),
            ("answer", answer), ("gold", smp["gold"] or None), ("status", status),
            ("locator", position[str(smp["id"])]), ("response_chars", float(len(smp["completion"]))),
            ("subtask", subtask), ("category", category),
        ):  # fmt: skip
            cols[col].append(value)
    if skipped:
        problems.append(Problem(path, f"{skipped} sample(s) without a correct/incorrect {name} score skipped",
                                "non_binary", skipped))  # fmt: skip
    if not_rescored:
        problems.append(Problem(
            path, f"{not_rescored} sample(s) cannot be rescored (no choices, target or response logged); their "
            "logged score is used", "not_rescored", not_rescored,
        ))  # fmt: skip
    if run.n_expected is not None and samples and len(samples) < run.n_expected:
        problems.append(Problem(path, f"holds {len(samples)} of the {run.n_expected} samples inspect_ai planned "
                                f"(status {header.status})", "incomplete"))  # fmt: skip
    notes = []
    if run.repeats > 1:
        notes.append(f"task {run.task} ran {run.repeats} epochs: each epoch is a replicate, paired epoch by epoch")
    info = {"filter": "none", "metric": name, "lines": len(samples), "items": len(set(cols["doc_id"])),
            "extractors": []}  # fmt: skip
    return RunRead(req, item_rows(run, path, cols), problems, notes, info)


def loaded_item(path: str, locator: int) -> LoadedItem:
    """The item at position ``locator`` of the log's ``sample_ids`` (this file's own list), every epoch read."""
    log = _log_api(path)
    header = log.read_eval_log(path, header_only=True)
    ids = header.eval.dataset.sample_ids or []
    if not 0 <= int(locator) < len(ids):
        raise IndexError(f"no sample at position {locator} of {path}")
    sample_id = ids[int(locator)]
    epochs = []  # one per epoch, so that a replicate indexes its reply; None where a cut-short run lacks it
    for epoch in range(1, (header.eval.config.epochs or 1) + 1):
        try:
            epochs.append(log.read_eval_log_sample(path, id=sample_id, epoch=epoch, exclude_fields={"events", "store"}))
        except IndexError:
            epochs.append(None)
    first = next((s for s in epochs if s is not None), None)
    if first is None:
        raise IndexError(f"no sample {sample_id!r} in {path}")
    prompt = next((m.text for m in first.messages if m.role == "user"), None)
    return LoadedItem(
        question=_text(first.input), options=list(first.choices or []), gold=_gold(first.target),
        responses=[s.output.completion if s is not None and s.output else "" for s in epochs], prompt=prompt,
        doc={"id": first.id, "metadata": first.metadata}, doc_id=doc_id(first.id),
    )  # fmt: skip
