"""Probing a model while it trains: evaluate the live model through lm-eval's Python API, write each probe as
``lm_eval --log_samples`` writes a run, pair it with the first and the previous probe, and at the end write
the curve report.

Works with any training loop (:class:`Probes` takes the model and the step); the ``Trainer`` callback
(:mod:`postforget_lmeval.training.callback`) drives it from the Trainer's events.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from postforget_lmeval import task_dir
from postforget_lmeval.api import pair
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import curve as curve_report
from postforget_lmeval.report.files import atomic_write

T = TypeVar("T")


@dataclass
class Probe:
    """One evaluation of the model: its step, its run folder and what it cost: ``seconds`` in all (evaluating,
    writing, pairing), ``scoring`` of them inside the model's requests (lm-eval's ``loglikelihood`` and
    ``generate_until`` calls), and the same two in CPU seconds (what a shared machine's wall times hide)."""

    step: int
    directory: Path
    seconds: float
    scoring: float = 0.0
    cpu: float = 0.0
    scoring_cpu: float = 0.0

    def record(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "seconds": round(self.seconds, 3),
            "scoring_seconds": round(self.scoring, 3),
            "cpu_seconds": round(self.cpu, 3),
            "scoring_cpu_seconds": round(self.scoring_cpu, 3),
        }


@dataclass
class Clock:
    """Wall and CPU seconds spent inside the model's requests: lm-eval's request methods of the wrapped model are
    timed, so a probe's cost splits into the scoring and everything else."""

    wall: float = 0.0
    cpu: float = 0.0

    def timed(self, method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.wall += time.perf_counter() - wall
                self.cpu += time.process_time() - cpu

        return run

    def read(self) -> tuple[float, float]:
        return self.wall, self.cpu


REQUESTS = ("loglikelihood", "loglikelihood_rolling", "generate_until")
"""lm-eval's request methods of a model: what the model's scoring is."""


PROBE_GEN_TOKS = 256
"""The probes' reply budget when the user names none: the tasks ask for the paper's 32,768 tokens, more than most
models read, and a probe pays for every token it generates."""

MANIFEST = "probes.json"
"""What the probes wrote in their output folder (settings, steps, costs): how a resumed run finds its earlier
probes and how a failed start knows what is its own to remove."""


@dataclass
class Probes:
    """Probe runs of one training run, in ``output_dir/step_<N>``; the curve report in ``output_dir``.

    ``tasks``: lm-eval task names (``postforget_*`` or any task whose samples log a per-item correctness);
    ``limit`` or ``samples`` (lm-eval's own options) keep a probe small; ``metadata`` reaches the tasks as
    ``lm_eval --metadata`` does (through the TaskManager, e.g. a dataset hook's size). ``evaluate_kwargs`` go to
    ``lm_eval.simple_evaluate`` as they are (``gen_kwargs``, ``num_fewshot``, ``apply_chat_template``, ...),
    ``hflm_kwargs`` to lm-eval's ``HFLM`` (``max_length``, ...). Generative tasks reply within
    ``gen_kwargs``' ``max_gen_toks`` if given, else within :func:`probe_budget`'s. ``copy_device``: where the
    main process keeps the plain copy of an FSDP-sharded model that it probes (see :meth:`full`).
    """

    tasks: Sequence[str]
    output_dir: str | os.PathLike[str]
    limit: int | float | None = None
    samples: dict[str, list[int]] | None = None
    include_path: str | os.PathLike[str] | None = None
    metadata: dict[str, Any] | None = None
    seed: int = 1234
    batch_size: int | str = 8
    evaluate_kwargs: dict[str, Any] = field(default_factory=dict)
    hflm_kwargs: dict[str, Any] = field(default_factory=dict)
    copy_device: str = "cpu"
    done: list[Probe] = field(default_factory=list, init=False)
    lm: Any = field(default=None, init=False)
    task_manager: Any = field(default=None, init=False)
    tasks_loaded: Any = field(default=None, init=False)
    clock: Clock = field(default_factory=Clock, init=False)
    environment: dict[str, Any] = field(default_factory=dict, init=False)
    copy: Any = field(default=None, init=False)
    gen_kwargs: dict[str, Any] = field(default_factory=dict, init=False)
    budget_note: str = field(default="", init=False)
    baseline: PairResult | None = field(default=None, init=False)
    generative: list[str] = field(default_factory=list, init=False)
    made: list[Path] = field(default_factory=list, init=False)

    @property
    def out(self) -> Path:
        return Path(self.output_dir)

    def check_output_dir(self) -> None:
        """Refuse a folder that holds anything (its probes would be paired with this run's); make the folder and
        check that it can be written to, before any training step."""
        if self.out.exists() and (not self.out.is_dir() or any(self.out.iterdir())):
            raise PairingError(
                f"{self.out} already exists and is not empty (probes of another run would be paired with this "
                "run's): give the callback an output_dir of its own, or remove that folder"
            )
        self._writable()

    def _writable(self) -> None:
        missing = [p for p in (self.out, *self.out.parents) if not p.exists()]
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.out):
                pass
        except OSError as e:
            raise PairingError(
                f"cannot write the probes to {self.out} ({e.strerror or e}): give an output_dir that the training "
                "process can create and write to"
            ) from e
        self.made += [p for p in missing if p not in self.made]

    def resume(self, step: int) -> bool:
        """Continue the curve of a run resumed from a checkpoint at ``step``: keep the probes ``output_dir`` holds
        up to that step (the first one stays the baseline) and remove the later ones, which measured the
        abandoned continuation. False, with the folder checked as for a new run, when it holds no probes."""
        manifest = self.out / MANIFEST
        if not manifest.is_file():
            self.check_output_dir()
            return False
        self._writable()
        record = json.loads(manifest.read_text(encoding="utf-8"))
        if record["settings"] != self._settings():
            raise PairingError(
                f"the probes in {self.out} were made with other settings ({record['settings']}) than this run's "
                f"({self._settings()}): resume with the same tasks and options, or give a new output_dir"
            )
        kept = [p for p in record["probes"] if p["step"] <= step]
        if not kept:
            raise PairingError(
                f"{self.out} holds no probe at or before step {step}, where training resumes: give a new output_dir"
            )
        for p in record["probes"]:
            if p["step"] > step:
                shutil.rmtree(self.out / _step_name(p["step"]), ignore_errors=True)
        self.done = [
            Probe(
                p["step"],
                self.out / _step_name(p["step"]),
                p["seconds"],
                p.get("scoring_seconds", 0.0),
                p.get("cpu_seconds", 0.0),
                p.get("scoring_cpu_seconds", 0.0),
            )
            for p in kept
        ]
        absent = [str(p.directory) for p in self.done if not p.directory.is_dir()]
        if absent:
            raise PairingError(f"earlier probes listed in {manifest} are missing: {', '.join(absent)}")
        self._record()
        return True

    def _settings(self) -> dict[str, Any]:
        settings = {
            "tasks": list(self.tasks),
            "limit": self.limit,
            "samples": self.samples,
            "seed": self.seed,
            "evaluate_kwargs": {**self.evaluate_kwargs, "gen_kwargs": self.gen_kwargs},
        }
        return json.loads(json.dumps(settings, default=str))

    def _record(self) -> None:
        probes = [p.record() for p in self.done]
        text = json.dumps({"settings": self._settings(), "probes": probes}, indent=1)
        atomic_write(self.out / MANIFEST, lambda path: path.write_text(text, encoding="utf-8"))

    def full(self, model: Any) -> Any:
        """The model a probe evaluates on this process. An FSDP-sharded model (torch's ``fully_shard``, or the
        older ``FullyShardedDataParallel``) holds a share of its weights on each rank: every rank must call this
        (the weights are gathered, a collective), and the main process gets a plain copy of the model on
        ``copy_device`` holding the full weights (made from ``model.config`` at the first probe, refilled at each),
        the other ranks None. Any other model is returned as it is."""
        if not sharded(model):
            return model
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        weights = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if not _is_main():
            return None
        if self.copy is None:
            self.copy = _plain_copy(model, weights).to(self.copy_device)
        self.copy.load_state_dict(weights)
        return self.copy

    def wrap(self, model: Any, tokenizer: Any) -> None:
        """lm-eval's HF backend around the live model (no copy on disk; the weights it reads are the ones being
        trained) and the probes' reply budget for its context; a clear error if it cannot wrap it."""
        import lm_eval.models  # noqa: F401 - registers the built-in backends before the registry is used
        from lm_eval.models.huggingface import HFLM

        if tokenizer is None:
            raise PairingError(
                "no tokenizer to evaluate the model with: give the Trainer a processing_class (tokenizer) or pass "
                "tokenizer= to the callback"
            )
        try:
            with _kept(model), _quiet():  # HFLM switches the model to eval mode, and warns about a live model
                self.lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=self.batch_size, **self.hflm_kwargs)
        except Exception as e:  # lm-eval asserts and raises many types for models it cannot drive
            raise PairingError(
                f"lm-eval's HF backend cannot evaluate a {type(model).__name__} ({type(e).__name__}: {e}); the "
                "probes need a transformers causal LM (a PreTrainedModel, PEFT models included)"
            ) from e
        for name in REQUESTS:  # the model's scoring, timed apart from everything else a probe does
            setattr(self.lm, name, self.clock.timed(getattr(self.lm, name)))
        self.gen_kwargs, self.budget_note = probe_budget(self.evaluate_kwargs.get("gen_kwargs"), self.lm.max_length)

    def probe(self, model: Any, step: int) -> Path:
        """Evaluate the model at ``step`` and write the run in ``output_dir/step_<N>`` (whole, or not at all); the
        model's train/eval modes, gradient flags and every random generator are as they were afterwards."""
        import lm_eval
        from lm_eval.loggers import EvaluationTracker

        started, cpu = time.perf_counter(), time.process_time()
        scored = self.clock.read()
        directory = self.out / _step_name(step)
        if directory.exists():
            raise PairingError(f"{directory} already exists: probes of one run go in a folder of their own")
        staging = self.out / f".{directory.name}.partial"  # a probe is written here, checked, then renamed
        if self.task_manager is None:
            self.task_manager = _task_manager(self.tasks, self.include_path, self.metadata)
        if self.tasks_loaded is None:
            self.tasks_loaded = LoadedOnce(self.task_manager)
        tracker = EvaluationTracker(output_path=str(staging))
        name = getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__
        with _kept(model), _quiet(), _environment_once(self.environment):
            results = lm_eval.simple_evaluate(
                model=self.lm,
                model_args={"pretrained": f"{name}@step{step}"},
                tasks=list(self.tasks),
                task_manager=self.tasks_loaded,
                limit=self.limit,
                samples=self.samples,
                log_samples=True,
                evaluation_tracker=tracker,
                **lm_eval_seeds(self.seed),
                **{**self.evaluate_kwargs, "gen_kwargs": self.gen_kwargs or None},
            )
        if results is None:
            raise RuntimeError(f"lm_eval returned no results for the probe at step {step}")
        self.generative = [t for t, c in results["configs"].items() if c.get("output_type") == "generate_until"]
        try:
            save_run(tracker, results, staging, directory)
            staging.rename(directory)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        wall, cpu_scored = self.clock.read()
        self.done.append(
            Probe(
                step,
                directory,
                time.perf_counter() - started,
                wall - scored[0],
                time.process_time() - cpu,
                cpu_scored - scored[1],
            )
        )
        self._record()
        return directory

    def start(self, model: Any, step: int) -> Path:
        """The first probe, before any training step. What lm-eval refuses (an unknown task, options it does not
        take, a reply budget the model cannot hold) and a task that cannot be paired stop here, naming the tasks;
        only what the probes wrote is removed."""
        self._writable()  # a folder that takes no files stops here, before lm-eval runs
        try:
            try:
                directory = self.probe(model, step)
            except PairingError:
                raise
            except Exception as e:  # lm-eval's assertions and errors, in our words
                raise PairingError(_cannot_run(self.tasks, e, self.lm)) from e
            self.check_first()
        except PairingError:
            self._discard()
            raise
        if self.generative and self.budget_note:
            print(f"forgetting probes: {', '.join(self.generative)} {self.budget_note}", flush=True)
        return directory

    def _discard(self) -> None:
        """Remove what the probes wrote (their step folders, the manifest, the folders they made), nothing else."""
        for p in self.done:
            shutil.rmtree(p.directory, ignore_errors=True)
        self.done = []
        (self.out / MANIFEST).unlink(missing_ok=True)
        for folder in self.made:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: files someone else put there stay

    def check_first(self) -> None:
        """Pair the first probe with a copy of itself: a probe task whose samples carry no per-item correctness
        (or that the pairing leaves out) stops the training here, before its first step. The pair is the
        baseline's figures (accuracy at the first probe)."""
        first = self.done[0].directory
        with tempfile.TemporaryDirectory() as tmp:
            copy = shutil.copytree(first, Path(tmp) / first.name)
            try:
                result = pair(first, copy, analyses=False)
                problems = [w for w in result.warnings if "left out" in w]
                if result.subtasks.empty or problems:
                    raise PairingError("; ".join(problems) or "no item could be paired")
            except PairingError as e:
                raise PairingError(
                    f"the probe tasks {', '.join(self.tasks)} cannot be paired (a probe task must log a per-item "
                    f"correctness such as acc or exact_match in its samples): {e}"
                ) from e
        self.baseline = result

    def metrics(self) -> dict[str, float]:
        """The latest probe against the first and the previous one, in %: F_true, BT_true and accuracy per
        category and overall, keyed for the Trainer's log (``forgetting/<category>/F_true_pct``,
        ``forgetting_prev/...``); for the first probe, its accuracy (and F_true, BT_true against itself)."""
        if len(self.done) < 2:
            return _logged("forgetting", self.baseline) if self.baseline is not None else {}
        started, cpu = time.perf_counter(), time.process_time()
        first, previous, last = self.done[0], self.done[-2], self.done[-1]
        logs = _logged("forgetting", pair(first.directory, last.directory, analyses=False))
        if previous is not first:
            logs.update(_logged("forgetting_prev", pair(previous.directory, last.directory, analyses=False)))
        last.seconds += time.perf_counter() - started  # the probe's cost includes its pairing
        last.cpu += time.process_time() - cpu
        self._record()
        return logs

    def cost(self, elapsed: float) -> str:
        """What the latest probe cost, and the share of ``elapsed`` (seconds since training began) probes took."""
        last = self.done[-1]
        total = sum(p.seconds for p in self.done)
        return (
            f"forgetting probe at step {last.step}: {last.seconds:.1f} s (the model's scoring {last.scoring:.1f} s, "
            f"everything else {last.seconds - last.scoring:.1f} s; CPU {last.scoring_cpu:.1f} of "
            f"{last.cpu:.1f} s); all {len(self.done)} probes {total:.1f} s, "
            f"{total / max(elapsed, 1e-9):.0%} of the {elapsed:.1f} s since training began"
        )

    def finish(self, plot: bool = True) -> list[Path]:
        """The curve report of every probe (``curve.*``, ``items.csv``, ``chain/``) in ``output_dir``."""
        if len(self.done) < 2:
            return []
        dirs = [p.directory for p in self.done]
        _, written = curve_report.write_curve(dirs, self.out, [p.step for p in self.done], plot=plot)
        return written


def on_main(work: Callable[[], T], what: str) -> T | None:
    """``work()`` on the main process of a distributed run (on the only one otherwise); the other ranks wait at a
    collective and raise too if it fails (``what`` failed on the main process), rather than waiting into the
    process group's timeout. Returns what ``work`` returned on the main process, None on the others."""
    if not distributed():
        return work()
    import torch.distributed as dist

    failure: BaseException | None = None
    result = None
    if _is_main():
        try:
            result = work()
        except Exception as e:
            failure = e
    shared = [None if failure is None else f"{type(failure).__name__}: {failure}"]
    dist.broadcast_object_list(shared, src=0)
    if failure is not None:
        raise failure
    if shared[0] is not None:
        raise RuntimeError(f"{what} failed on the main process: {shared[0]}")
    return result


def distributed() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def _is_main() -> bool:
    import torch.distributed as dist

    return not distributed() or dist.get_rank() == 0


def sharded(model: Any) -> bool:
    """Whether ``model`` is sharded by FSDP (each rank holding a share of its weights)."""
    from torch.distributed.fsdp import FSDPModule, FullyShardedDataParallel

    return isinstance(model, FSDPModule | FullyShardedDataParallel)


def _plain_copy(model: Any, weights: dict[str, Any]) -> Any:
    """An unsharded model of the same architecture as the sharded ``model``, on the CPU, in the dtype of its
    ``weights``; the probes evaluate it with the weights gathered from the ranks."""
    import torch
    from transformers import AutoModelForCausalLM

    config = getattr(model, "config", None)
    if config is None:
        raise PairingError(
            f"the FSDP-sharded {type(model).__name__} has no config to build a plain copy from: the probes of a "
            "sharded model need a transformers causal LM"
        )
    dtype = next((w.dtype for w in weights.values() if w.is_floating_point()), torch.float32)
    copy = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return copy.eval()


def probe_budget(given: str | dict[str, Any] | None, context: int) -> tuple[dict[str, Any], str]:
    """The probes' ``gen_kwargs``: the user's, with a ``max_gen_toks`` chosen when they name none
    (:data:`PROBE_GEN_TOKS`, or a quarter of the model's ``context`` if that is less, so the prompt keeps the rest),
    and the line that announces the choice ("" when the user chose)."""
    from lm_eval.utils import simple_parse_args_string

    kwargs = simple_parse_args_string(given) if isinstance(given, str) else dict(given or {})
    if "max_gen_toks" in kwargs:
        return kwargs, ""
    budget = min(PROBE_GEN_TOKS, context // 4)
    kwargs["max_gen_toks"] = budget
    return kwargs, (
        f"generate: each probe reply stops at {budget} tokens (the tasks' own budget is the paper's 32768; the "
        f"model reads {context} tokens); choose another with evaluate_kwargs={{'gen_kwargs': "
        "{'max_gen_toks': N}}"
    )


def _cannot_run(tasks: Sequence[str], error: BaseException, lm: Any) -> str:
    """lm-eval's error at the first probe as the user can act on it: the tasks, the cause, what to do."""
    cause = f"{type(error).__name__}: {error}"
    if isinstance(error, AssertionError) and "maximum sequence length" in str(error):
        todo = (
            f"the reply budget does not fit the model's {lm.max_length}-token context: give "
            f"evaluate_kwargs={{'gen_kwargs': {{'max_gen_toks': N}}}} with N well below {lm.max_length}"
        )
    else:
        todo = (
            "check the task names, include_path, that each task's dataset can be loaded (from the Hugging Face Hub, "
            "or a local copy named in a task YAML under include_path) and the options passed to simple_evaluate"
        )
    return f"lm-eval cannot run the probe tasks {', '.join(tasks)} ({cause}); {todo}"


def _task_manager(tasks: Sequence[str], include_path: Any, metadata: dict[str, Any] | None) -> Any:
    """lm-eval's task index: only this project's tasks and ``include_path`` when they hold every probe task
    (indexing every task lm-eval ships costs more than a small probe), else all of them; once per training run."""
    from lm_eval.tasks import TaskManager

    include = [task_dir()] + ([str(include_path)] if include_path else [])
    with _quiet():
        manager = TaskManager(include_path=include, include_defaults=False, metadata=metadata)
        if all(t in manager.all_tasks for t in tasks):
            return manager
        return TaskManager(include_path=include, metadata=metadata)


class LoadedOnce:
    """lm-eval's task manager whose ``load`` reads the tasks (their datasets, prompts, few-shot samplers) at the
    first probe and hands the same task objects to every later one: ``simple_evaluate`` sets their options and
    few-shot seed again at each probe and ``evaluate`` builds their requests anew, so a probe is what a fresh load
    gives, without loading the datasets again."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.loaded: dict[tuple[str, ...], Any] = {}

    def load(self, tasks: Sequence[str]) -> Any:
        key = tuple(tasks)
        if key not in self.loaded:
            self.loaded[key] = self.manager.load(list(tasks))
        return self.loaded[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)


def _step_name(step: int) -> str:
    return f"step_{step:04d}"


def lm_eval_seeds(seed: int) -> dict[str, int]:
    """``simple_evaluate``'s four seeds (Python, NumPy, torch, few-shot sampling), all ``seed``: a probe is
    reproducible only when every one of them is fixed."""
    return {f"{name}_seed": seed for name in ("random", "numpy_random", "torch_random", "fewshot_random")}


def save_run(tracker: Any, results: dict[str, Any], written: Path, probe: Path) -> None:
    """Write what ``simple_evaluate(..., log_samples=True)`` returned as ``lm_eval --log_samples`` writes it (lm-eval's
    own tracker saves the results file and one sample log per task) into ``written``, and check it is whole:
    the tracker only logs a failed write (a full disk, a folder it cannot write), and a half-written run would
    be read as a run without ``--log_samples``. ``probe`` is the folder the run is meant for, named in the error."""
    samples = results.pop("samples")
    counts = {task: len(samples[task]) for task in results["configs"]}
    with _said("lm_eval.loggers.evaluation_tracker") as said:
        tracker.save_results_aggregated(results=results, samples=samples)
        for task_name in results["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    problems = _unwritten(written, counts, getattr(tracker, "date_id", None) or "(not saved)")
    if problems:
        cause = "; ".join(m for m in said if not m.startswith("Saving"))
        raise PairingError(
            f"the probe {probe} was not written whole ({'; '.join(problems)}{'; lm-eval: ' + cause if cause else ''})"
            f": check the free space and the permissions of {probe.parent}; the half-written probe was removed"
        )


def _unwritten(directory: Path, counts: dict[str, int], stamp: str) -> list[str]:
    """What is missing of the run that lm-eval's tracker saved under ``stamp`` (its ``date_id``, in every file name
    of the run, so that earlier runs in the same folder do not count): its results file (whole JSON) and each task's
    sample lines."""
    problems = []
    results = list(directory.rglob(f"results_{stamp}.json"))
    if len(results) != 1:
        problems.append("no results file")
    else:
        try:
            json.loads(results[0].read_bytes())
        except ValueError:
            problems.append(f"{results[0].name} is cut off")
    for task, n in counts.items():
        files = list(directory.rglob(f"samples_{task}_{stamp}.jsonl"))
        lines = files[0].read_bytes().count(b"\n") if len(files) == 1 else 0
        if lines != n:
            problems.append(f"{lines} of the {n} sample lines of {task}")
    return problems


def _logged(prefix: str, result: PairResult) -> dict[str, float]:
    """Percentages, as the reports give them; the unit is in the key."""
    cats = result.categories[result.categories["average"] == "macro"]
    logs = {}
    for r in cats.itertuples(index=False):
        key = f"{prefix}/{'overall' if r.category == OVERALL else r.category}"
        logs[f"{key}/F_true_pct"] = 100 * float(r.F_true_mean)
        logs[f"{key}/BT_true_pct"] = 100 * float(r.BT_true_mean)
        logs[f"{key}/accuracy_pct"] = 100 * float(r.acc_after_mean)
    return logs


@contextlib.contextmanager
def _said(name: str) -> Iterator[list[str]]:
    """The messages logger ``name`` emits inside the block, whatever its level, kept from every other handler."""
    said: list[str] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger(name)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """lm-eval's log lines (which tasks, which gen_kwargs, ...) and the stderr of its ``git describe`` ("fatal: not
    a git repository" outside a checkout) are silenced while a probe runs, and put back after: errors still show."""
    import lm_eval.evaluator as evaluator

    logger = logging.getLogger("lm_eval")
    level, git = logger.level, evaluator.get_git_commit_hash

    def quiet_git() -> Any:
        sys.stderr.flush()
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # the git child process writes to file descriptor 2 itself
        try:
            return git()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)

    logger.setLevel(logging.ERROR)
    evaluator.get_git_commit_hash = quiet_git
    try:
        yield
    finally:
        logger.setLevel(level)
        evaluator.get_git_commit_hash = git


@contextlib.contextmanager
def _environment_once(kept: dict[str, Any]) -> Iterator[None]:
    """lm-eval describes the environment in every results file (torch's ``collect_env``, which runs ``pip`` and
    ``nvidia-smi``, and ``git describe``); the environment of one training run does not change, so it is collected
    at the run's first probe and the same description written into every later one."""
    import lm_eval.evaluator as evaluator

    describe, git = evaluator.add_env_info, evaluator.get_git_commit_hash

    def env_once(storage: dict[str, Any]) -> None:
        if "env" not in kept:
            kept["env"] = {}
            describe(kept["env"])
        storage.update(kept["env"])

    def git_once() -> Any:
        if "git" not in kept:
            kept["git"] = git()
        return kept["git"]

    evaluator.add_env_info, evaluator.get_git_commit_hash = env_once, git_once
    try:
        yield
    finally:
        evaluator.add_env_info, evaluator.get_git_commit_hash = describe, git


@contextlib.contextmanager
def _kept(model: Any) -> Iterator[None]:
    """Put back what an evaluation changes: each module's train/eval mode, each parameter's ``requires_grad``,
    autograd's switch, and the random generators lm-eval seeds (so training draws what it would have)."""
    import numpy as np
    import torch

    modes = [(m, m.training) for m in model.modules()]
    grads = [(p, p.requires_grad) for p in model.parameters()]
    grad_enabled = torch.is_grad_enabled()
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training
        for param, requires in grads:
            param.requires_grad_(requires)
        torch.set_grad_enabled(grad_enabled)
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
