"""What a forgetting probe costs on the demo's model (``make bench``): the model's scoring against everything else.

It loads SmolLM2-135M-Instruct (converted once into the cache, as ``postforget demo`` does), takes the demo's
log-likelihood twin (``postforget_demo_world_ll``, 4 options a fact) on its first ``--facts`` facts, sets the
probes up once and probes three times (the first probe, with its check, and two more), in float32 as the demo
does. For each probe it prints the
wall and CPU seconds in all, inside the model's requests (lm-eval's ``loglikelihood``), and everything else
(loading the tasks at the first probe, building requests, writing the run, pairing), as ``probes.json`` records
them. With ``--train-steps N`` it also times N of the demo's training steps and prints the probe interval that
keeps the probes at or under 10% of the training's CPU time. CPU seconds are the figures to go by on a shared
machine.

    python scripts/bench_probes.py [--facts 90] [--train-steps 4]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

SHARE = 0.10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=45, help="facts per probe (the demo probes 45)")
    parser.add_argument("--train-steps", type=int, default=0, help="time this many of the demo's training steps")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from postforget_lmeval.demo import real, smollm
    from postforget_lmeval.training import Probes

    hf_logging.set_verbosity_error()
    torch.set_num_threads(real.THREADS)
    folder = smollm.model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        facts = {real.TWIN: list(range(args.facts))}
        probes = Probes([real.TWIN], work / "probes", samples=facts, batch_size=real.BATCH, seed=real.SEED)
        with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink):  # lm-eval's progress bars
            setup = time.process_time()
            probes.check_output_dir()
            probes.wrap(model, tokenizer)
            setup = time.process_time() - setup
            probes.start(model, 0)
            probes.metrics()
            for step in (1, 2):
                probes.probe(model, step)
                probes.metrics()
        recorded = json.loads((work / "probes" / "probes.json").read_text(encoding="utf-8"))["probes"]
        print(f"probes of {args.facts} facts on {smollm.NAME}; set-up (wrapping the model) {setup:.2f} CPU-s")
        print(f"{'step':>4} {'wall s':>7} {'CPU s':>6} {'scoring CPU s':>13} {'else CPU s':>10} {'else':>5}")
        for p in recorded:
            rest = p["cpu_seconds"] - p["scoring_cpu_seconds"]
            print(
                f"{p['step']:>4} {p['seconds']:>7.2f} {p['cpu_seconds']:>6.2f} {p['scoring_cpu_seconds']:>13.2f} "
                f"{rest:>10.2f} {rest / p['cpu_seconds']:>5.0%}"
            )
        if args.train_steps:
            probe_cpu = max(p["cpu_seconds"] for p in recorded[1:])
            step_cpu = _train(model, tokenizer, args.train_steps, work) / args.train_steps
            every = math.ceil(probe_cpu * (1 - SHARE) / (SHARE * step_cpu))
            print(
                f"training: {step_cpu:.2f} CPU-s per step (the demo's: {real.Settings.batch_size} examples, top "
                f"{real.Settings.train_layers} layers); a later probe {probe_cpu:.2f} CPU-s: eval_every >= {every} "
                f"keeps the probes at or under {SHARE:.0%} of the training"
            )
    return 0


def _train(model, tokenizer, steps: int, work: Path) -> float:
    """CPU seconds of ``steps`` of the demo's training (its settings, its texts), the Trainer's set-up excluded."""
    from transformers import TrainerCallback

    from postforget_lmeval.demo import real, world

    class Clock(TrainerCallback):
        cpu = 0.0

        def on_step_begin(self, *args, **kwargs) -> None:
            self.began = time.process_time()

        def on_step_end(self, *args, **kwargs) -> None:
            self.cpu += time.process_time() - self.began

    settings = real.Settings(steps=steps)
    texts = real.schedules(world.questions()[:40], settings)["after"]
    clock = Clock()
    real.post_train(model, tokenizer, texts, settings, work / "trainer", [clock])
    return clock.cpu


if __name__ == "__main__":
    sys.exit(main())
