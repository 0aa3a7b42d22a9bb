"""``ForgettingCallback``: item-level forgetting while a ``transformers.Trainer`` (or a TRL trainer) trains.

At train begin it evaluates the model as it is on the probe tasks, then every ``eval_every`` steps (and on the
Trainer's evaluate or save events when asked), pairs each probe with the first and the previous one and logs
F_true, BT_true and accuracy per category through ``trainer.log`` (so ``state.log_history`` and every
reporting integration the user enabled get them). At train end it writes the curve report. See docs/training.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from transformers import TrainerCallback

from postforget_lmeval.training.probes import Probes


class ForgettingCallback(TrainerCallback):
    """Probe the model being trained for item-level forgetting; see :class:`~postforget_lmeval.training.probes.Probes`
    for ``limit``, ``samples``, ``include_path``, ``metadata``, ``seed``, ``batch_size``, ``evaluate_kwargs``,
    ``hflm_kwargs``.

    ``trainer`` is the Trainer this callback is added to (its ``log`` is how the figures reach the loggers);
    ``tokenizer`` defaults to the Trainer's ``processing_class``. ``eval_every``: probe every that many optimizer
    steps (None: only at begin and end, and on the events below); ``on_evaluate`` / ``on_save``: probe also when
    the Trainer evaluates or saves a checkpoint.
    """

    def __init__(
        self,
        trainer: Any,
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
        if eval_every is not None and eval_every < 1:
            raise ValueError(f"eval_every must be a positive number of steps or None, not {eval_every!r}")
        if not tasks:
            raise ValueError("name at least one lm-eval task to probe with (tasks=[...])")
        self.trainer = trainer
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

    def _run(self, state: Any, control: Any, step: int, *, first: bool = False) -> None:
        """Probe on the main process; the other ranks wait at a collective and fail too if the probe fails, rather
        than waiting into the process group's timeout."""
        failure: BaseException | None = None
        if self._main(state):
            try:
                if first:
                    self.probes.check_output_dir()
                    self.probes.wrap(self.trainer.model, self.tokenizer or self.trainer.processing_class)
                if not self.probes.done or self.probes.done[-1].step != step:
                    self._probe(control, step, first)
            except Exception as e:
                if not _distributed():
                    raise
                failure = e
        if _distributed():
            import torch.distributed as dist

            shared = [None if failure is None else f"{type(failure).__name__}: {failure}"]
            dist.broadcast_object_list(shared, src=0)
            if failure is not None:
                raise failure
            if shared[0] is not None:
                raise RuntimeError(f"the forgetting probe at step {step} failed on the main process: {shared[0]}")

    def _probe(self, control: Any, step: int, first: bool) -> None:
        (self.probes.start if first else self.probes.probe)(self.trainer.model, step)
        logs = self.probes.metrics()
        logs["forgetting/probe_seconds"] = self.probes.done[-1].seconds
        print(self.probes.cost(time.perf_counter() - self.started), flush=True)
        should_log = control.should_log
        self.trainer.log(logs)
        control.should_log = should_log  # trainer.log clears it: the Trainer's own log of this step (loss) still runs

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if getattr(self.trainer, "is_fsdp_enabled", False) or getattr(self.trainer, "is_deepspeed_enabled", False):
            raise NotImplementedError(
                "ForgettingCallback does not support FSDP or DeepSpeed yet (the probes need the whole model on one "
                "process): train with a single process or DDP, or evaluate saved checkpoints with lm_eval and "
                "`postforget-pair curve`"
            )
        self.started = time.perf_counter()
        self._run(state, control, state.global_step, first=True)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.eval_every and state.global_step % self.eval_every == 0:
            self._run(state, control, state.global_step)

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe_on_evaluate:
            self._run(state, control, state.global_step)

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe_on_save:
            self._run(state, control, state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._run(state, control, state.global_step)
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
        if _distributed():
            import torch.distributed as dist

            dist.barrier()


def _distributed() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1
