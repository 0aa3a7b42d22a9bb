"""``postforget demo``: real forgetting, measured end to end, offline, on a laptop CPU.

What it does, and why each step is there:

1. Builds a word-level tokenizer over two synthetic fact sets (:mod:`postforget_lmeval.demo.facts`)
   and a tiny Llama-style causal LM, both from scratch: nothing is downloaded.
2. *Pretrains* the model on the ``pretrain`` facts, rendered exactly as the
   ``postforget_demo_facts`` task prompts them, until it answers nearly all of them: this is
   the model ``before``.
3. *Post-trains* two copies on the ``posttrain`` facts (other facts about the same invented
   entities): ``after`` (posttrain facts only) and ``after_replay`` (the same steps with one
   example in 16 replayed from the pretrain facts). Nothing is staged: no pretrain fact is
   contradicted or trained away on purpose; they get lost because learning the new facts
   rewrites the weights that held them.
4. Trains two *unrelated* models (fresh random inits, a little posttrain data, each with the
   options in its own order): they answer in the right format but know none of the pretrain
   facts, so pairing them shows the "forgetting" that guessing alone produces: a raw F of the
   order of the chance baseline F_chance, and a chance-adjusted F_true near 0.
5. Saves every model as an ordinary Hugging Face checkpoint and evaluates each under every seed
   in one process through lm-eval's Python API (``simple_evaluate``, HF backend, sampling, sample
   logs written by lm-eval's ``EvaluationTracker`` exactly where and how ``lm_eval --log_samples``
   writes them; ``unrelated_b`` with seeds of its own, see ``EVAL_SEED_OFFSET``).
6. Pairs the runs with :func:`postforget_lmeval.pair` (three pairs: the forgetting, the replay and
   the unrelated control), writes each pair's outputs with its report.html, and the table across
   the three pairs (``pairs/pairs.html``).

The default run takes a few minutes on 2 CPU cores; ``--quick`` is the small version the tests run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import math
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from postforget_lmeval import task_dir
from postforget_lmeval.demo import facts as demo_data
from postforget_lmeval.demo import output
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import many as multipair
from postforget_lmeval.report.paper_table import rich_table, stdout_console
from postforget_lmeval.scoring import LETTERS

try:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from transformers.utils import logging as hf_logging
except ImportError as exc:  # the demo trains models: it needs the [hf] extra
    raise ImportError(
        f"postforget demo needs torch and transformers ({exc.name} is missing): pip install 'postforget-lmeval[hf]'"
    ) from exc

TASK = "postforget_demo_facts"
PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"

# A 2-layer, 128-wide Llama memorises a few hundred facts in a few hundred CPU steps, and is small
# enough that post-training on other facts overwrites a visible part of them.
MODEL = {"hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4}
MAX_POSITIONS = 256  # prompts are ~90 tokens
BATCH_SIZE = 32
LR = 3e-3
WARMUP_STEPS = 30
EVAL_EVERY = 25  # while pretraining: how often to check whether the target is reached
WATCH_EVERY = 100  # otherwise the check only feeds the progress bar and the history
MAX_GEN_TOKS = 16  # "\nAnswer: X" and EOS are 5 tokens; a guessing model may ramble a little first


@dataclass(frozen=True)
class Settings:
    """How much data and training a demo run uses."""

    n_facts: int  # pretrain facts: the evaluated task's size
    n_post: int  # posttrain facts
    pretrain_target: float  # pretraining stops once this share of pretrain facts is answered right
    pretrain_max_steps: int  # about twice what reaching the target takes: bounds the run time
    post_steps: int
    post_lr: float
    replay: float  # share of every after_replay batch drawn from the pretrain facts
    unrelated_steps: int  # enough for the answer format, not for any pretrain fact
    seeds: tuple[int, ...] = field(default=(1, 2, 3))


# Post-training at 2e-3 for a few hundred steps learns the new facts completely and loses roughly half
# of the old ones (30-55 points over model seeds); 1 replayed example in 16 keeps most of them.
DEFAULT = Settings(
    n_facts=300,
    n_post=300,
    pretrain_target=0.99,
    pretrain_max_steps=800,
    post_steps=300,
    post_lr=2e-3,
    replay=1 / 16,
    unrelated_steps=100,
)
QUICK = replace(DEFAULT, n_facts=100, n_post=100, pretrain_max_steps=400, post_steps=150, seeds=(1, 2))


@dataclass
class Example:
    """One training sequence: prompt + ``\\nAnswer: X`` + EOS, and where the letter sits."""

    ids: list[int]
    letter_pos: int


def build_tokenizer(texts: Sequence[str]) -> PreTrainedTokenizerFast:
    """Word-level tokenizer whose decode reproduces the text exactly.

    Every word (with its leading space, GPT-2 style) is one token, so the tiny model sees each
    invented name as a single symbol; the byte-level decoder puts the spaces and newlines back, so
    lm-eval's decoded generation reads ``\\nAnswer: B`` and the task's extraction finds it.
    """
    tok = Tokenizer(models.WordLevel(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainer=trainers.WordLevelTrainer(special_tokens=[PAD, EOS, UNK]))
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=EOS, pad_token=PAD, unk_token=UNK, model_max_length=MAX_POSITIONS
    )


def encode(rows: Sequence[dict], tokenizer: PreTrainedTokenizerFast) -> list[Example]:
    """Encode prompt and answer separately, as lm-eval encodes the prompt alone before generating."""
    out = []
    for row in rows:
        prompt_ids = tokenizer.encode(demo_data.prompt(row))
        answer_ids = tokenizer.encode(demo_data.target(row))
        if tokenizer.unk_token_id in prompt_ids + answer_ids:
            raise ValueError(f"{row['id']}: text outside the demo tokenizer's vocabulary")
        out.append(Example(prompt_ids + answer_ids + [tokenizer.eos_token_id], len(prompt_ids) + len(answer_ids) - 1))
    return out


def new_model(tokenizer: PreTrainedTokenizerFast, seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        **MODEL,
    )
    return LlamaForCausalLM(config)


def _batch(examples: Sequence[Example], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, attention mask and labels (every real token: plain language modelling)."""
    width = max(len(e.ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, e in enumerate(examples):
        ids[i, : len(e.ids)] = torch.tensor(e.ids)
        mask[i, : len(e.ids)] = 1
    return ids, mask, ids.masked_fill(mask == 0, -100)


@torch.no_grad()
def letter_accuracy(
    model: LlamaForCausalLM, examples: Sequence[Example], letter_ids: Sequence[int], pad_id: int
) -> float:
    """Share of examples whose most likely letter (of the four) after ``Answer:`` is the gold one.

    A cheap in-process proxy for the task's accuracy, used to decide when pretraining is done;
    the reported numbers come from lm-eval.
    """
    model.eval()
    correct = 0
    for start in range(0, len(examples), 128):
        chunk = examples[start : start + 128]
        ids, mask, _ = _batch(chunk, pad_id)
        logits = model(input_ids=ids, attention_mask=mask).logits
        for i, e in enumerate(chunk):
            scores = logits[i, e.letter_pos - 1, list(letter_ids)]
            correct += letter_ids[int(scores.argmax())] == e.ids[e.letter_pos]
    model.train()
    return correct / len(examples)


def _epochs(rng: random.Random, examples: Sequence[Example]) -> Iterator[Example]:
    """Examples in a fresh random order every epoch: each is seen once per pass."""
    while True:
        order = list(examples)
        rng.shuffle(order)
        yield from order


@dataclass
class TrainResult:
    steps: int
    seconds: float
    history: list[tuple[int, float]]  # (step, letter_accuracy on the watched set)

    @property
    def accuracy(self) -> float:
        return self.history[-1][1] if self.history else float("nan")


def train(
    model: LlamaForCausalLM,
    data: Sequence[Example],
    *,
    steps: int,
    lr: float,
    seed: int,
    pad_id: int,
    letter_ids: Sequence[int],
    watch: Sequence[Example],
    progress: Progress,
    label: str,
    replay: Sequence[Example] = (),
    replay_share: float = 0.0,
    stop_at: float | None = None,
) -> TrainResult:
    """AdamW on ``data`` (plus ``replay_share`` of every batch from ``replay``) for ``steps`` steps.

    ``watch`` is the set whose letter accuracy the progress bar shows (the pretrain facts, to watch
    them being learnt or forgotten). With ``stop_at``, training ends as soon as that accuracy is
    reached, and the learning rate stays constant after warm-up (there is no known end to decay
    towards); otherwise it decays linearly to 0 at ``steps``, as post-training recipes do, so the
    end point does not depend on where one noisy step landed.
    """
    start = time.perf_counter()
    # separate streams: after and after_replay see the new data in the same order
    fresh, old = _epochs(random.Random(seed), data), _epochs(random.Random(seed + 1), replay)
    n_replay = round(BATCH_SIZE * replay_share) if replay else 0
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    decay = stop_at is None
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / WARMUP_STEPS, (steps - s) / max(1, steps - WARMUP_STEPS) if decay else 1.0),
    )
    bar = progress.add_task(label, total=steps, loss=float("nan"), acc=float("nan"))
    model.train()
    history: list[tuple[int, float]] = []
    for step in range(1, steps + 1):
        examples = [next(fresh) for _ in range(BATCH_SIZE - n_replay)] + [next(old) for _ in range(n_replay)]
        ids, mask, labels = _batch(examples, pad_id)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        schedule.step()
        if step % (EVAL_EVERY if stop_at is not None else WATCH_EVERY) == 0 or step == steps:
            accuracy = letter_accuracy(model, watch, letter_ids, pad_id)
            history.append((step, accuracy))
            progress.update(bar, acc=accuracy)
            if stop_at is not None and accuracy >= stop_at:
                progress.update(bar, total=step)
                break
        progress.update(bar, advance=1, loss=loss.item())
    return TrainResult(step, time.perf_counter() - start, history)


def save(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, path: Path) -> Path:
    """An ordinary HF checkpoint directory: ``lm_eval --model hf`` loads it offline."""
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def evaluate(checkpoints: dict[str, Path], settings: Settings, out: Path, console: Console) -> int:
    """Evaluate every checkpoint under every seed in this one process, through lm-eval's Python API.

    Each run is what ``lm_eval run --model hf --model_args pretrained=<checkpoint> --tasks
    postforget_demo_facts --seed S --log_samples --output_path out/lm_eval/<name>`` would write
    (lm-eval's own ``EvaluationTracker`` saves the results file and the sample log in the CLI's
    layout), without paying lm-eval's start-up (imports, task index) once per run: a pipeline that
    evaluates many checkpoints calls ``simple_evaluate`` like this. ``n_facts`` reaches
    :func:`demo_data.facts_dataset` through the task's metadata, as ``--metadata`` does. Returns the
    number of runs.
    """
    import lm_eval
    import lm_eval.models  # noqa: F401 - registers the built-in backends: lm-eval imports them only while its

    # model registry is empty, so 'hf' is unknown in a process that registered a model of its own first
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from postforget_lmeval.training.probes import lm_eval_seeds, save_run

    for name in ("lm_eval", "lm-eval"):  # lm-eval logs every request batch at INFO; the bar below says enough
        logging.getLogger(name).setLevel(logging.WARNING)
    metadata = {"n_facts": settings.n_facts}
    manager = TaskManager(include_path=task_dir(), metadata=metadata)
    runs = [(name, base + EVAL_SEED_OFFSET.get(name, 0)) for base in settings.seeds for name in checkpoints]
    console.print(
        f"[bold]lm_eval[/]: {len(runs)} runs ({len(checkpoints)} models x seeds "
        f"{','.join(map(str, settings.seeds))}) in one process, task {TASK}"
    )
    with Progress(
        TextColumn("lm_eval runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        bar = progress.add_task("lm_eval", total=len(runs))
        log = out / "logs" / "lm_eval.log"  # lm-eval's per-request progress bars (stderr) go here
        log.parent.mkdir(parents=True, exist_ok=True)
        for name, seed in runs:
            tracker = EvaluationTracker(output_path=str(out / "lm_eval" / name))
            with log.open("a", encoding="utf-8") as sink, contextlib.redirect_stderr(sink):
                results = lm_eval.simple_evaluate(
                    model="hf",
                    model_args={"pretrained": str(checkpoints[name]), "dtype": "float32"},
                    tasks=[TASK],
                    task_manager=manager,
                    metadata=metadata,
                    device="cpu",
                    batch_size=64,
                    gen_kwargs=f"max_gen_toks={MAX_GEN_TOKS}",
                    log_samples=True,
                    evaluation_tracker=tracker,
                    **lm_eval_seeds(seed),
                )
            if results is None:
                raise RuntimeError(f"lm_eval returned no results for {name} (seed {seed})")
            save_run(tracker, results, out / "lm_eval" / name, out / "lm_eval" / name)
            progress.update(bar, advance=1)
    return len(runs)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(bar_width=16),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.2f} pretrain acc {task.fields[acc]:.0%}"),
        TimeElapsedColumn(),
        console=console,
    )


def _letter_ids(tokenizer: PreTrainedTokenizerFast) -> list[int]:
    """The token of each answer letter as it follows ``Answer:`` (one token each)."""
    ids = [tokenizer.encode(f" {letter}") for letter in LETTERS[: demo_data.N_OPTIONS]]
    if any(len(i) != 1 for i in ids):
        raise RuntimeError(f"answer letters are not single tokens: {ids}")
    return [i[0] for i in ids]


RUNS = ("checkpoints", "lm_eval", "logs", "pairs")
"""The folders of ``out`` each run of the demo writes anew."""


def _pair_summary(result: PairResult) -> dict[str, float]:
    """Seed mean and sample std of the headline numbers of one pairing (one sub-benchmark: the facts)."""
    table = result.subtasks
    summary: dict[str, float] = {"seeds": len(table)}
    for column in ("acc_before", "acc_after", "F", "F_chance", "F_true", "BT_true", "F_rel"):
        summary[column] = float(table[column].mean())
        summary[f"{column}_std"] = float(table[column].std(ddof=1)) if len(table) > 1 else float("nan")
    return summary


def _pct(summary: dict[str, float], column: str, sep: str = " ± ") -> str:
    std = summary[f"{column}_std"]
    return f"{100 * summary[column]:.1f}" + ("" if math.isnan(std) else f"{sep}{100 * std:.1f}")


def _summary_table(pairs: dict[str, dict]) -> Table:
    """All three pairs side by side; compact enough for an 80-column terminal."""
    table = Table(
        title="Pretrain facts, first model → second: % over seeds (mean, ±std)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("pair", no_wrap=True)
    for header in ("acc 1st", "acc 2nd", "F raw", "F_chance", "F_true", "BT_true"):
        table.add_column(header, justify="right", no_wrap=True)
    for s in pairs.values():
        means = (f"{100 * s[c]:.1f}" for c in ("acc_before", "acc_after", "F", "F_chance"))
        table.add_row(s["label"], *means, _pct(s, "F_true", "±"), _pct(s, "BT_true", "±"))
    return table


PAIRS = {  # pairing directory: (label, before model, after model, pair() options)
    "forgetting": ("before→after", "before", "after", {}),
    "replay": ("before→after_replay", "before", "after_replay", {}),
    "unrelated": ("unrelated_a→b", "unrelated_a", "unrelated_b", {"seed_match": "order"}),
}
# With equal lm_eval seeds, two models that are both unsure draw their letters from the same random
# numbers and agree far more often than independent guessers; unrelated_b gets its own seeds.
EVAL_SEED_OFFSET = {"unrelated_b": 1000}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget demo",
        description="Train a tiny LM on made-up facts, post-train it on others, and measure what it forgot "
        "with lm_eval and postforget-pair. Offline, CPU only.",
    )
    p.add_argument("--out", default="demo_out", help="work directory (default: ./demo_out); re-running clears it")
    p.add_argument("--quick", action="store_true", help="fewer facts, steps and seeds (what the tests run)")
    p.add_argument(
        "--seeds",
        type=lambda v: tuple(int(x) for x in v.split(",")),
        help="comma-separated lm_eval sampling seeds (default: 1,2,3; --quick: 1,2)",
    )
    return p


def train_models(
    settings: Settings, console: Console
) -> tuple[PreTrainedTokenizerFast, dict[str, LlamaForCausalLM], dict[str, TrainResult]]:
    """The tokenizer and the five models: before, after, after_replay, unrelated_a, unrelated_b."""
    pre_rows = demo_data.fact_rows("pretrain", n_facts=settings.n_facts)
    post_rows = demo_data.fact_rows("posttrain", n_facts=settings.n_post)
    tokenizer = build_tokenizer(demo_data.corpus(pre_rows + post_rows))
    pre, post = encode(pre_rows, tokenizer), encode(post_rows, tokenizer)
    common = {"pad_id": tokenizer.pad_token_id, "letter_ids": _letter_ids(tokenizer), "watch": pre}
    console.print(
        f"[bold]postforget demo[/]: {len(pre)} pretrain facts (evaluated), {len(post)} posttrain facts, "
        f"vocabulary {len(tokenizer)}"
    )

    models: dict[str, LlamaForCausalLM] = {}
    training: dict[str, TrainResult] = {}
    with _progress(console) as progress:
        models["before"] = new_model(tokenizer, seed=0)
        training["before"] = train(
            models["before"],
            pre,
            steps=settings.pretrain_max_steps,
            lr=LR,
            seed=0,
            progress=progress,
            label="pretrain: before",
            stop_at=settings.pretrain_target,
            **common,
        )
        for name, replay in (("after", ()), ("after_replay", pre)):
            models[name] = copy.deepcopy(models["before"])
            training[name] = train(
                models[name],
                post,
                steps=settings.post_steps,
                lr=settings.post_lr,
                seed=1,
                progress=progress,
                label=f"post-train: {name}",
                replay=replay,
                replay_share=settings.replay,
                **common,
            )
        for i, name in enumerate(("unrelated_a", "unrelated_b"), start=1):
            models[name] = new_model(tokenizer, seed=100 + i)
            own_post = encode(demo_data.reorder_options(post_rows, seed=100 + i), tokenizer)
            training[name] = train(
                models[name],
                own_post,
                steps=settings.unrelated_steps,
                lr=LR,
                seed=100 + i,
                progress=progress,
                label=f"train: {name}",
                **common,
            )
    if training["before"].accuracy < settings.pretrain_target:
        console.print(
            f"[yellow]warning:[/] pretraining stopped at {settings.pretrain_max_steps} steps with "
            f"{training['before'].accuracy:.1%} of the pretrain facts right (target "
            f"{settings.pretrain_target:.0%}); the demo goes on with that model"
        )
    for name, result in training.items():
        console.print(
            f"  {name:<13} {result.steps:>4} steps {result.seconds:>4.0f}s  "
            f"pretrain facts right (in-process check): {result.accuracy:.1%}"
        )
    return tokenizer, models, training


def run(settings: Settings, out: Path, console: Console) -> dict:
    """The whole demo; returns what it writes to ``out/demo.json``."""
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    hf_logging.disable_progress_bar()  # save_pretrained's per-shard bars would drown the demo's own
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    tokenizer, models, training = train_models(settings, console)
    timings["pretrain"] = training["before"].seconds
    timings["post-train"] = training["after"].seconds + training["after_replay"].seconds
    timings["unrelated"] = training["unrelated_a"].seconds + training["unrelated_b"].seconds

    start = time.perf_counter()
    checkpoints = {name: save(model, tokenizer, out / "checkpoints" / name) for name, model in models.items()}
    timings["save"] = time.perf_counter() - start

    start = time.perf_counter()
    evaluate(checkpoints, settings, out, console)
    timings["lm_eval"] = time.perf_counter() - start

    start = time.perf_counter()
    specs = [
        multipair.PairSpec(label, str(out / "lm_eval" / before), str(out / "lm_eval" / after), key, options)
        for key, (label, before, after, options) in PAIRS.items()
    ]
    results, _ = multipair.run_pairs(specs, out / "pairs")
    pairs = {
        spec.slug: {"label": spec.label, **_pair_summary(results[spec.label]), "output": str(out / "pairs" / spec.slug)}
        for spec in specs
    }
    console.print(rich_table(results[specs[0].label]))
    timings["pair"] = time.perf_counter() - start
    timings["total"] = time.perf_counter() - clock

    console.print(_summary_table(pairs))
    real, replayed, noise = pairs["forgetting"], pairs["replay"], pairs["unrelated"]
    console.print(
        f"Post-training on other facts took the model from {real['acc_before']:.1%} to {real['acc_after']:.1%} "
        f"on the pretrain facts: chance-adjusted forgetting F_true = {_pct(real, 'F_true')}%, against "
        f"{_pct(noise, 'F_true')}% for two unrelated models that can only guess (raw F {_pct(noise, 'F')}%, "
        f"where the chance model expects {100 * noise['F_chance']:.1f}%). Replaying 1 example in "
        f"{round(1 / settings.replay)} from the pretrain facts: F_true = {_pct(replayed, 'F_true')}%."
    )
    for s in pairs.values():
        console.print(f"  {s['label']:<20} {s['output']}/report.html")
    console.print(f"  all three pairs side by side: {out / 'pairs' / 'pairs.html'}")
    console.print("Timings: " + ", ".join(f"{k} {v:.0f}s" for k, v in timings.items()))
    return {
        "status": "done",
        "settings": asdict(settings),
        "timings_s": timings,
        "training": {name: asdict(r) for name, r in training.items()},
        "checkpoints": {name: str(p) for name, p in checkpoints.items()},
        "pairs": pairs,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``postforget demo`` / ``python -m postforget_lmeval.demo.run``; 0 on success, 1 on a failure."""
    args = _parser().parse_args(argv)
    settings = QUICK if args.quick else DEFAULT
    if args.seeds:
        settings = replace(settings, seeds=args.seeds)
    out = Path(args.out).resolve()
    console = stdout_console()  # long paths stay whole, for copying; wide when piped
    return output.run_in(out, RUNS, console, lambda: run(settings, out, console))


if __name__ == "__main__":
    sys.exit(main())
