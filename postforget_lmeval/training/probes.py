"""Probing a model while it trains: evaluate the live model through lm-eval's Python API, write each probe as
``lm_eval --log_samples`` writes a run, pair it with the first and the previous probe, and at the end write
the curve report.

Works with any training loop (:class:`Probes` takes the model and the step); the ``Trainer`` callback
(:mod:`postforget_lmeval.training.callback`) drives it from the Trainer's events.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from postforget_lmeval import task_dir
from postforget_lmeval.api import pair
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import curve as curve_report


@dataclass
class Probe:
    """One evaluation of the model: its step, its run folder and what it cost (evaluating, writing, pairing)."""

    step: int
    directory: Path
    seconds: float


@dataclass
class Probes:
    """Probe runs of one training run, in ``output_dir/step_<N>``; the curve report in ``output_dir``.

    ``tasks``: lm-eval task names (``postforget_*`` or any task whose samples log a per-item correctness);
    ``limit`` or ``samples`` (lm-eval's own options) keep a probe small; ``metadata`` reaches the tasks as
    ``lm_eval --metadata`` does (through the TaskManager, e.g. a dataset hook's size). ``evaluate_kwargs`` go to
    ``lm_eval.simple_evaluate`` as they are (``gen_kwargs``, ``num_fewshot``, ``apply_chat_template``, ...),
    ``hflm_kwargs`` to lm-eval's ``HFLM`` (``max_length``, ...).
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
    done: list[Probe] = field(default_factory=list, init=False)
    lm: Any = field(default=None, init=False)
    task_manager: Any = field(default=None, init=False)

    @property
    def out(self) -> Path:
        return Path(self.output_dir)

    def check_output_dir(self) -> None:
        """Refuse a folder that holds anything: its probes would be paired with this run's."""
        if self.out.exists() and (not self.out.is_dir() or any(self.out.iterdir())):
            raise PairingError(
                f"{self.out} already exists and is not empty (probes of another run would be paired with this "
                "run's): give the callback an output_dir of its own, or remove that folder"
            )

    def wrap(self, model: Any, tokenizer: Any) -> None:
        """lm-eval's HF backend around the live model (no copy on disk; the weights it reads are the ones being
        trained); a clear error if it cannot wrap it."""
        import lm_eval.models  # noqa: F401 - registers the built-in backends before the registry is used
        from lm_eval.models.huggingface import HFLM

        if tokenizer is None:
            raise PairingError(
                "no tokenizer to evaluate the model with: give the Trainer a processing_class (tokenizer) or pass "
                "tokenizer= to the callback"
            )
        try:
            with _kept(model):  # HFLM switches the model to eval mode
                self.lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=self.batch_size, **self.hflm_kwargs)
        except Exception as e:  # lm-eval asserts and raises many types for models it cannot drive
            raise PairingError(
                f"lm-eval's HF backend cannot evaluate a {type(model).__name__} ({type(e).__name__}: {e}); the "
                "probes need a transformers causal LM (a PreTrainedModel, PEFT models included)"
            ) from e

    def probe(self, model: Any, step: int) -> Path:
        """Evaluate the model at ``step`` and write the run in ``output_dir/step_<N>``; the model's train/eval
        modes, gradient flags and every random generator are as they were afterwards."""
        import lm_eval
        from lm_eval.loggers import EvaluationTracker
        from lm_eval.tasks import TaskManager

        started = time.perf_counter()
        directory = self.out / f"step_{step:04d}"
        if self.task_manager is None:  # indexing every task lm-eval knows is slow: once per training run
            include = [task_dir()] + ([str(self.include_path)] if self.include_path else [])
            self.task_manager = TaskManager(include_path=include, metadata=self.metadata)
        tracker = EvaluationTracker(output_path=str(directory))
        name = getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__
        for logger in ("lm_eval", "lm-eval"):
            logging.getLogger(logger).setLevel(logging.WARNING)
        with _kept(model):
            results = lm_eval.simple_evaluate(
                model=self.lm,
                model_args={"pretrained": f"{name}@step{step}"},
                tasks=list(self.tasks),
                task_manager=self.task_manager,
                limit=self.limit,
                samples=self.samples,
                log_samples=True,
                evaluation_tracker=tracker,
                **lm_eval_seeds(self.seed),
                **self.evaluate_kwargs,
            )
        if results is None:
            raise RuntimeError(f"lm_eval returned no results for the probe at step {step}")
        save_run(tracker, results)
        self.done.append(Probe(step, directory, time.perf_counter() - started))
        return directory

    def start(self, model: Any, step: int) -> Path:
        """The first probe, before any training step. What lm-eval refuses (an unknown task, options it does not
        take) and a task that cannot be paired stop here, naming the tasks, and leave no output folder behind."""
        try:
            directory = self.probe(model, step)
        except (KeyError, ValueError, TypeError, OSError) as e:
            shutil.rmtree(self.out, ignore_errors=True)
            raise PairingError(
                f"lm-eval cannot run the probe tasks {', '.join(self.tasks)} ({type(e).__name__}: {e}); check the "
                "task names, include_path and the options passed to simple_evaluate"
            ) from e
        self.check_first()
        return directory

    def check_first(self) -> None:
        """Pair the first probe with a copy of itself: a probe task whose samples carry no per-item correctness
        (or that the pairing leaves out) stops the training here, before its first step."""
        first = self.done[0].directory
        with tempfile.TemporaryDirectory() as tmp:
            copy = shutil.copytree(first, Path(tmp) / first.name)
            try:
                result = pair(first, copy, analyses=False)
                problems = [w for w in result.warnings if "left out" in w]
                if result.subtasks.empty or problems:
                    raise PairingError("; ".join(problems) or "no item could be paired")
            except PairingError as e:
                shutil.rmtree(self.out)
                raise PairingError(
                    f"the probe tasks {', '.join(self.tasks)} cannot be paired (a probe task must log a per-item "
                    f"correctness such as acc or exact_match in its samples): {e}"
                ) from e

    def metrics(self) -> dict[str, float]:
        """The latest probe against the first and the previous one: F_true, BT_true and accuracy per category
        and overall, keyed for the Trainer's log (``forgetting/<category>/F_true``, ``forgetting_prev/...``)."""
        if len(self.done) < 2:
            return {}
        started = time.perf_counter()
        first, previous, last = self.done[0], self.done[-2], self.done[-1]
        logs = _logged("forgetting", pair(first.directory, last.directory, analyses=False))
        if previous is not first:
            logs.update(_logged("forgetting_prev", pair(previous.directory, last.directory, analyses=False)))
        last.seconds += time.perf_counter() - started  # the probe's cost includes its pairing
        return logs

    def cost(self, elapsed: float) -> str:
        """What the latest probe cost, and the share of ``elapsed`` (seconds since training began) probes took."""
        last = self.done[-1]
        total = sum(p.seconds for p in self.done)
        return (
            f"forgetting probe at step {last.step}: {last.seconds:.1f} s; all {len(self.done)} probes {total:.1f} s, "
            f"{total / max(elapsed, 1e-9):.0%} of the {elapsed:.1f} s since training began"
        )

    def finish(self, plot: bool = True) -> list[Path]:
        """The curve report of every probe (``curve.*``, ``items.csv``, ``chain/``) in ``output_dir``."""
        if len(self.done) < 2:
            return []
        dirs = [p.directory for p in self.done]
        _, written = curve_report.write_curve(dirs, self.out, [p.step for p in self.done], plot=plot)
        return written


def lm_eval_seeds(seed: int) -> dict[str, int]:
    """``simple_evaluate``'s four seeds (Python, NumPy, torch, few-shot sampling), all ``seed``: a probe is
    reproducible only when every one of them is fixed."""
    return {f"{name}_seed": seed for name in ("random", "numpy_random", "torch_random", "fewshot_random")}


def save_run(tracker: Any, results: dict[str, Any]) -> None:
    """Write what ``simple_evaluate(..., log_samples=True)`` returned as ``lm_eval --log_samples`` writes it:
    lm-eval's own tracker saves the results file and one sample log per task."""
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


def _logged(prefix: str, result: PairResult) -> dict[str, float]:
    cats = result.categories[result.categories["average"] == "macro"]
    logs = {}
    for r in cats.itertuples(index=False):
        key = f"{prefix}/{'overall' if r.category == OVERALL else r.category}"
        logs[f"{key}/F_true"] = float(r.F_true_mean)
        logs[f"{key}/BT_true"] = float(r.BT_true_mean)
        logs[f"{key}/accuracy"] = float(r.acc_after_mean)
    return logs


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
