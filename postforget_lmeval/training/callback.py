"""``ForgettingCallback``: item-level forgetting while a ``transformers.Trainer`` (or a TRL trainer) trains.

At train begin it evaluates the model as it is on the probe tasks, then every ``eval_every`` steps (and on the
Trainer's evaluate or save events when asked), pairs each probe with the first and the previous one and logs
F_true, BT_true and accuracy (in %) per category, the first probe's included, through ``trainer.log`` (so
``state.log_history`` and every reporting integration the user enabled get them). At train end it writes the
curve report. See docs/training.md.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from transformers import TrainerCallback

from postforget_lmeval.errors import PairingError
from postforget_lmeval.training.probes import Probes, distributed, on_main, sharded


class ForgettingCallback(TrainerCallback):
    """Probe the model being trained for item-level forgetting; see :class:`~postforget_lmeval.training.probes.Probes`
    for ``limit``, ``samples``, ``include_path``, ``metadata``, ``seed``, ``batch_size``, ``evaluate_kwargs``,
    ``hflm_kwargs``.

    Give it to the Trainer (``Trainer(callbacks=[...])`` or ``trainer.add_callback``): the model and the tokenizer
    come with the Trainer's events (``tokenizer`` overrides the Trainer's ``processing_class``). ``eval_every``: probe
    every that many optimizer steps (None: only at begin and end, and on the events below); ``on_evaluate`` /
    ``on_save``: probe also when the Trainer evaluates or saves a checkpoint. A run resumed from a checkpoint into
    the same ``output_dir`` continues the same curve.
    """

    def __init__(
        self,
        tasks: str | Sequence[str],
        output_dir: str | os.PathLike[str],
        eval_every: int | None = 100,
        *,
        tokenizer: Any = None,
        on_evaluate: bool = False,
        on_save: bool = False,
        plot: bool = True,
        **probe_options: Any,
    ) -> None:
        if not tasks or not isinstance(tasks, str | Sequence) or not all(isinstance(t, str) for t in tasks):
            raise ValueError(
                f"tasks must name the lm-eval tasks to probe with (tasks=[...]), not {tasks!r}; the model and "
                "tokenizer come from the Trainer the callback is given to"
            )
        if eval_every is not None and eval_every < 1:
            raise ValueError(f"eval_every must be a positive number of steps or None, not {eval_every!r}")
        self.trainer: Any = None
        self.tokenizer = tokenizer
        self.eval_every = eval_every
        self.probe_on_evaluate = on_evaluate
        self.probe_on_save = on_save
        self.plot = plot
        self.probes = Probes([tasks] if isinstance(tasks, str) else list(tasks), output_dir, **probe_options)
        self.started = 0.0
        self.written: list[os.PathLike[str]] = []

    def _main(self, state: Any) -> bool:
        return bool(state.is_world_process_zero)

    def _run(
        self, state: Any, control: Any, step: int, model: Any, *, first: bool = False, tokenizer: Any = None
    ) -> None:
        """Probe on the main process (``first``: at train begin, with ``tokenizer``); every rank joins the gathering
        of a sharded model's weights, then waits at a collective and fails too if the probe fails."""
        full = self.probes.full(model)

        def work() -> None:
            if first:
                self._begin(state, control, full, tokenizer)
            elif not self.probes.done or self.probes.done[-1].step != step:
                self._probe(control, full, step)

        on_main(work, f"the forgetting probe at step {step}")

    def _begin(self, state: Any, control: Any, model: Any, tokenizer: Any) -> None:
        """The first probe (the baseline) of a new run; for a run resumed from a checkpoint, the earlier probes in
        the same folder, or, when there are none, a first probe at the checkpoint's step."""
        self.probes.wrap(model, tokenizer)
        step = state.global_step
        if step > 0 and self.probes.resume(step):
            print(
                f"forgetting probes: resumed at step {step}, continuing the curve of the probes at steps "
                f"{', '.join(str(p.step) for p in self.probes.done)} in {self.probes.out}",
                flush=True,
            )
            return
        if step > 0:
            print(
                f"forgetting probes: no earlier probes in {self.probes.out}; the curve of this resumed run measures "
                f"against step {step} (the checkpoint), not the model before training",
                flush=True,
            )
        else:
            self.probes.check_output_dir()
        self.probes.start(model, step)
        self._log(control, self.probes.metrics())

    def _probe(self, control: Any, model: Any, step: int) -> None:
        self.probes.probe(model, step)
        self._log(control, self.probes.metrics())

    def _log(self, control: Any, logs: dict[str, float]) -> None:
        last = self.probes.done[-1]
        logs["forgetting/probe_seconds"] = last.seconds
        logs["forgetting/probe_scoring_seconds"] = last.scoring
        print(self.probes.cost(time.perf_counter() - self.started), flush=True)
        should_log = control.should_log
        self.trainer.log(logs)
        control.should_log = should_log  # trainer.log clears it: the Trainer's own log of this step (loss) still runs

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.trainer = _calling_trainer(self)
        refused = _refused(self.trainer, kwargs["model"])
        if refused:
            raise NotImplementedError(refused)
        self.started = time.perf_counter()
        tokenizer = self.tokenizer or kwargs.get("processing_class") or kwargs.get("tokenizer")
        self._run(state, control, state.global_step, kwargs["model"], first=True, tokenizer=tokenizer)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.eval_every and state.global_step % self.eval_every == 0:
            self._run(state, control, state.global_step, kwargs["model"])

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe_on_evaluate:
            self._run(state, control, state.global_step, kwargs["model"])

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe_on_save:
            self._run(state, control, state.global_step, kwargs["model"])

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._run(state, control, state.global_step, kwargs["model"])
        if self._main(state):
            elapsed = time.perf_counter() - self.started
            total = sum(p.seconds for p in self.probes.done)
            self.written = self.probes.finish(plot=self.plot)
            print(
                f"forgetting probes: {len(self.probes.done)} took {total:.1f} s, {total / max(elapsed, 1e-9):.0%} "
                f"of the {elapsed:.1f} s of training; curve report written in "
                f"{time.perf_counter() - self.started - elapsed:.1f} s to {self.probes.out}",
                flush=True,
            )
        if distributed():
            import torch.distributed as dist

            dist.barrier()


def _refused(trainer: Any, model: Any) -> str:
    """Why the callback cannot probe this Trainer's model ("" when it can): DeepSpeed, and FSDP where the model the
    Trainer hands to callbacks is not the sharded one (FSDP1 wraps it in another module; FSDP2 shards it in
    place, and its weights are gathered at each probe)."""
    if getattr(trainer, "is_deepspeed_enabled", False):
        return (
            "ForgettingCallback does not support DeepSpeed yet (the probes need the whole model on one process): "
            "train with a single process, DDP or FSDP2, or evaluate saved checkpoints with lm_eval and "
            "`postforget-pair curve`"
        )
    if getattr(trainer, "is_fsdp_enabled", False) and not sharded(model):
        return (
            "ForgettingCallback probes FSDP2-sharded models (the weights are gathered at each probe), but the model "
            "this Trainer hands to its callbacks is not the sharded one (FSDP1 wraps it): set "
            "fsdp_config={'fsdp_version': 2}, or evaluate saved checkpoints with lm_eval and `postforget-pair curve`"
        )
    return ""


def _calling_trainer(callback: ForgettingCallback) -> Any:
    """The ``transformers.Trainer`` that holds ``callback``: its ``log`` is how the figures reach
    ``state.log_history`` and every reporting integration (W&B, TensorBoard, ...). transformers (5.24) hands callbacks
    neither the Trainer nor its callback handler (the events carry ``args``, ``state``, ``control``, the model, the
    processing class, optimizer, scheduler and dataloaders), and a callback's ``on_log`` runs after the reporting
    integrations' own, so the Trainer is read from the calling frames: the nearest one whose callbacks include this
    one, not merely the nearest Trainer (another Trainer's method may be the one that dispatched the event)."""
    from transformers import Trainer

    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        handler = getattr(owner, "callback_handler", None)
        if isinstance(owner, Trainer) and any(c is callback for c in getattr(handler, "callbacks", ())):
            return owner
        frame = frame.f_back
    raise PairingError(
        "ForgettingCallback found no caller of this event that holds it: it runs inside the transformers Trainer it "
        "was given to (Trainer(callbacks=[...]) or trainer.add_callback; a trainer built on it, such as TRL's, too), "
        "whose own methods dispatch its events; for another training loop use postforget_lmeval.training.Probes"
    )
