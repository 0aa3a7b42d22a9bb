"""Reading inspect_ai logs through inspect_ai's own reader: a log's header as a task run, its samples as items.

Only this module and :mod:`._inspect_stream` (imported here once inspect_ai is found) import ``inspect_ai``
(the ``inspect`` extra); without it, every entry point raises a PairingError that names the extra. Samples
are streamed one at a time (:mod:`._inspect_stream`), so memory is bounded by the largest sample, and a
sample that cannot be read is named in a problem (file, sample, cause) and skipped. What a sample says:

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
from pathlib import Path
from typing import Any

from postforget_lmeval.errors import PairingError
from postforget_lmeval.sources._base import LoadedItem, Problem, ReadRequest, RunRead, TaskRun, item_id, item_rows
from postforget_lmeval.sources._lighteval_items import subtask_of

EXTRA = "pip install 'postforget-lmeval[inspect]'"
SKIP_FIELDS = {"messages", "events", "events_data", "store", "attachments"}  # large, and not needed to score an item
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
    from postforget_lmeval.sources._inspect_stream import header as read_header

    try:
        header = read_header(log, str(path))
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
    """``sample.target`` (a string, or a list of strings: several right letters) as one string."""
    return "".join(target)


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


def _kept(sample: Any, policy: str | None) -> dict[str, Any]:
    """What pairing keeps of one sample: no reply text (rescored here when rescoring), so that memory does not
    grow with the log's replies. ``output`` is always there; a sample that failed before any reply has no choices,
    where ``stop_reason`` raises."""
    from postforget_lmeval.scoring.rescoring import rescore

    choices, gold = list(sample.choices or []), _gold(sample.target)
    completion = sample.output.completion
    rescored = None
    if policy and choices and gold and completion:
        rescored = rescore(completion, choices, gold, "letters" if len(gold) > 1 else "letter", policy)
    return {
        "id": sample.id, "epoch": sample.epoch, "hash": _doc_hash(sample), "k": len(choices), "gold": gold,
        "chars": float(len(completion)), "stop": sample.output.stop_reason if sample.output.choices else None,
        "scores": {n: (sc.value, sc.answer or None) for n, sc in (sample.scores or {}).items()},
        "rescored": rescored,
    }  # fmt: skip


def _shown(entries: list[str], limit: int = 3) -> str:
    return "; ".join(entries[:limit]) + (f"; ... ({len(entries) - limit} more)" if len(entries) > limit else "")


def read_run(req: ReadRequest) -> RunRead:
    """Every sample of one log, one per item and epoch, in the log's order, read one at a time; a sample that
    cannot be read (or is not in the log's ``sample_ids``) is skipped and named in a problem."""
    run, path = req.run, str(req.run.samples_path)
    log = _log_api(path)
    from postforget_lmeval.sources._inspect_stream import cause, header
    from postforget_lmeval.sources._inspect_stream import samples as stream

    subtask, category = subtask_and_category(run.task)
    head = header(log, path)
    ids = head.eval.dataset.sample_ids
    if ids is None:  # `show` finds a sample again by its place in this list; logs of old versions may lack it
        problem = Problem(path, f"lists no sample_ids, so its samples cannot be found again; task {run.task} "
                          "skipped (reading the log with inspect_ai and writing it back adds them)")  # fmt: skip
        return RunRead(req, item_rows(run, path, {c: [] for c in ("doc_id", "doc_hash", "correct", "locator")}),
                       [problem])  # fmt: skip
    position = {str(i): n for n, i in enumerate(ids)}
    samples: list[dict[str, Any]] = []
    problems: list[Problem] = []
    unreadable: list[str] = []
    unlisted: list[str] = []
    try:
        for where, s in stream(path, SKIP_FIELDS):
            if isinstance(s, Exception):
                unreadable.append(f"{where}: {cause(s)}")
            elif str(s.id) not in position:
                unlisted.append(f"{where} (id {s.id!r})")
            else:
                samples.append(_kept(s, req.rescore))
    except Exception as e:  # the log itself (its zip directory, a file cut short): what was read is kept
        problems.append(Problem(path, f"cannot be read past its first {len(samples) + len(unreadable)} sample(s) "
                                f"({cause(e)}); the rest of task {run.task} is not read", "unreadable"))  # fmt: skip
    if unreadable:
        problems.append(Problem(path, f"{len(unreadable)} sample(s) of task {run.task} cannot be read and are "
                                f"skipped: {_shown(unreadable)}", "malformed", len(unreadable)))  # fmt: skip
    if unlisted:
        problems.append(Problem(path, f"{len(unlisted)} sample(s) of task {run.task} have an id that is not in the "
                                f"log's sample_ids, so they cannot be found again; skipped: {_shown(unlisted)}",
                                "malformed", len(unlisted)))  # fmt: skip
    name = _scorer([{n: value for n, (value, _) in smp["scores"].items()} for smp in samples])
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
        value, answer = smp["scores"].get(name, (None, None))
        if not _is_binary(value):
            skipped += 1
            continue
        logged = _BINARY[value]
        status, correct = _status(value, answer, smp["stop"]), logged
        if req.rescore:
            if (got := smp["rescored"]) is not None:
                answer, status, correct = got.answer, got.status, got.correct
            else:
                not_rescored += 1
            cols["correct_logged"].append(logged)
        for col, value in (
            ("doc_id", item_id(smp["id"])), ("doc_hash", smp["hash"]), ("replicate", smp["epoch"] - 1),
            ("correct", correct), ("k", float(smp["k"]) if smp["k"] else math.nan),
            ("answer", answer), ("gold", smp["gold"] or None), ("status", status),
            ("locator", position[str(smp["id"])]), ("response_chars", smp["chars"]),
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
    held = len(samples) + len(unreadable) + len(unlisted)
    if run.n_expected is not None and samples and held < run.n_expected:
        problems.append(Problem(path, f"holds {held} of the {run.n_expected} samples inspect_ai planned "
                                f"(status {head.status})", "incomplete"))  # fmt: skip
    notes = []
    if run.repeats > 1:
        notes.append(f"task {run.task} ran {run.repeats} epochs: each epoch is a replicate, paired epoch by epoch")
    info = {"filter": "none", "metric": name, "lines": len(samples), "items": len(set(cols["doc_id"])),
            "extractors": []}  # fmt: skip
    return RunRead(req, item_rows(run, path, cols), problems, notes, info)


def loaded_item(path: str, locator: int) -> LoadedItem:
    """The item at position ``locator`` of the log's ``sample_ids`` (this file's own list), every epoch read; a
    sample that cannot be read raises ValueError naming the file, the sample and the cause."""
    log = _log_api(path)
    from postforget_lmeval.sources._inspect_stream import cause, header

    head = header(log, path)
    ids = head.eval.dataset.sample_ids or []
    if not 0 <= int(locator) < len(ids):
        raise IndexError(f"no sample at position {locator} of {path}")
    sample_id = ids[int(locator)]
    epochs = []  # one per epoch, so that a replicate indexes its reply; None where a cut-short run lacks it
    for epoch in range(1, (head.eval.config.epochs or 1) + 1):
        try:
            epochs.append(log.read_eval_log_sample(path, id=sample_id, epoch=epoch, exclude_fields={"events", "store"}))
        except IndexError:
            epochs.append(None)
        except Exception as e:  # a corrupt member: pydantic, zlib/zstd or JSON errors
            raise ValueError(f"sample {sample_id!r} epoch {epoch} of {path} cannot be read ({cause(e)})") from e
    first = next((s for s in epochs if s is not None), None)
    if first is None:
        raise IndexError(f"no sample {sample_id!r} in {path}")
    prompt = next((m.text for m in first.messages if m.role == "user"), None)
    return LoadedItem(
        question=_text(first.input), options=list(first.choices or []), gold=_gold(first.target),
        responses=[s.output.completion if s is not None else "" for s in epochs], prompt=prompt,
        doc={"id": first.id, "metadata": first.metadata}, doc_id=item_id(first.id),
    )  # fmt: skip
