"""The speed floor of ``postforget-pair`` on generated lm-eval sample logs (``make bench``).

For each size (GB of sample logs, both sides together) it writes a before and an after directory laid
out and serialised like lm-eval 0.4.13 (``samples_<task>_<time>.jsonl`` lines of chain-of-thought
responses of 2-8 KB, 3 seeds) and measures, in one run on the same files: ``wc -l`` over them, the
reading phase alone, the whole ``postforget-pair --no-plot`` and the same with ``--rescore strict``.
A small case repeated with 4x longer responses (the same samples, 4x the bytes) shows whether memory
grows with response length. It prints the figures and whether each floor is met:

* the whole ``postforget-pair`` at >= 4% of ``wc -l``'s throughput (its time <= 25x wc -l's), and with
  ``--no-analyses`` at >= 6% (<= 16.7x): regression guards, not targets (the analyses are worth their seconds);
* peak memory (the main process and the largest worker) under 1 GB, and flat in response length
  (4x longer responses: at most 25% more);
* ``--rescore strict`` at >= 100 MB/s.

Generated data lives under a temporary directory in /tmp and is deleted at the end (``--keep`` keeps it).

    python scripts/bench_pairing.py [--sizes 2] [--jobs N] [--repeat 3] [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEEDS = (0, 1, 2)
ITEMS_PER_TASK = 400
WORDS = (
    "the of and to in is that it was for on are as with his they at be this from have or by one had not but "
    "what all were when we there can an your which their said if do will each about how up out them then she "
    "many some so these would other into has more her two like him see time could no make than first been its "
    "who now people my made over did down only way find use may water long little very after words called just "
    "where most know get through back much go good new write our me man too any day same right look think also "
    "around another came come work three word must because does part even place well such here take why help "
    "therefore answer option reasoning step"
).split()


def _text(rng: random.Random, n_bytes: int) -> str:
    """About ``n_bytes`` of words in sentences of ~12 words (a period ends one), like written reasoning."""
    words, size = [], 0
    while size < n_bytes:
        w = rng.choice(WORDS) + ("." if rng.random() < 1 / 12 else "")
        words.append(w)
        size += len(w) + 1
    return " ".join(words)


def _extractor() -> str:
    """The extractor name the task hook logs (imported here: the measured process must not pay for it)."""
    from postforget_lmeval.scoring.extraction import EXTRACTOR_NAME, EXTRACTOR_VERSION

    return f"{EXTRACTOR_NAME}/{EXTRACTOR_VERSION}"


def _sample(doc_id: int, question: str, response: str, subtask: str, gold: str, answer: str | None) -> str:
    """One line as lm-eval writes a postforget sample (lm_eval.evaluator's key order, json.dumps ensure_ascii=False).

    ``answer`` None: the reply gave no answer (status no_answer).
    """
    options = ["first option", "second option", "third option", "fourth option"]
    doc = {
        "question": question,
        "choices": options,
        "answer": 1,
        "pf_question": question,
        "pf_options": options,
        "pf_gold": gold,
        "pf_format": "letter",
        "pf_subtask": subtask,
        "pf_category": "Logic",
    }
    prompt = f'Answer the following multiple choice question.\nQuestion: "{question}"\n' + "\n".join(
        f"{'ABCD'[i]}) {o}" for i, o in enumerate(options)
    )
    correct = int(answer == gold)
    record = {
        "subtask": subtask,
        "benchmark": "mmlu",
        "category": "Logic",
        "variant": "chat",
        "k": 4.0,
        "n_options": 4,
        "answer": answer,
        "gold": gold,
        "status": "answered" if answer else "no_answer",
        "correct": correct,
        "extractor": _extractor(),
    }
    sample = {
        "doc_id": doc_id,
        "doc": doc,
        "target": gold,
        "arguments": {
            "gen_args_0": {
                "arg_0": prompt,
                "arg_1": {"until": [], "max_gen_toks": 32768, "temperature": 0.6, "top_p": 0.95, "do_sample": True},
            }
        },
        "resps": [[response]],
        "filtered_resps": [response],
        "filter": "none",
        "metrics": ["acc", "answered", "postforget"],
        "doc_hash": hashlib.sha256(json.dumps(doc, indent=2).encode()).hexdigest(),
        "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest(),
        "target_hash": hashlib.sha256(gold.encode()).hexdigest(),
        "acc": correct,
        "answered": int(answer is not None),
        "postforget": record,
    }
    return json.dumps(sample, ensure_ascii=False) + "\n"


def tasks_for(gb: float) -> int:
    """Sub-benchmarks (of ITEMS_PER_TASK items x 3 seeds x 2 sides) that make about ``gb`` GB with 2-8 KB responses."""
    rng = random.Random(0)
    # ~12 KB a line: the response is logged twice
    line_bytes = len(_sample(0, _text(rng, 500), _text(rng, 5000), "mmlu_s0", "B", "B"))
    return max(1, round(gb * 1e9 / (2 * len(SEEDS) * ITEMS_PER_TASK * line_bytes)))


def generate(root: Path, n_tasks: int, response_scale: int = 1, seed: int = 0) -> int:
    """Write before/ and after/ with ``n_tasks`` sub-benchmarks x 3 seeds each; returns the bytes written.

    Responses are 2-8 KB, times ``response_scale``; golds cycle through A-D; an answer is right with
    probability 0.7 before and 0.6 after, else a wrong letter or (1 in 10) none (status no_answer).
    """
    rng = random.Random(seed)
    responses = [_text(rng, response_scale * rng.randint(2000, 8000)) for _ in range(64)]
    questions = [_text(rng, rng.randint(200, 800)) for _ in range(ITEMS_PER_TASK)]
    written = 0
    for side in ("before", "after"):
        for s in SEEDS:
            date = f"2025-0{1 + (side == 'after')}-01T00-00-0{s}.000000"
            out = root / side / f"seed{s}"
            out.mkdir(parents=True)
            configs, results = {}, {}
            for t in range(n_tasks):
                task, subtask = f"postforget_mmlu_s{t}", f"mmlu_s{t}"
                configs[task] = {
                    "task": task,
                    "output_type": "generate_until",
                    "repeats": 1,
                    "generation_kwargs": {"temperature": 0.6, "seed": s},
                }
                results[task] = {"alias": task, "acc,none": 0.5, "answered,none": 1.0, "postforget,none": 4.0}
                with open(out / f"samples_{task}_{date}.jsonl", "w", encoding="utf-8") as f:
                    for i in range(ITEMS_PER_TASK):
                        gold = "ABCD"[i % 4]
                        if rng.random() < (0.7 if side == "before" else 0.6):
                            answer: str | None = gold
                        else:  # a wrong option, or (1 in 10) no answer at all
                            answer = None if rng.random() < 0.1 else rng.choice([c for c in "ABCD" if c != gold])
                        resp = f"[{side} {s} {i}] " + responses[rng.randrange(len(responses))]
                        resp += f"\nAnswer: {answer}" if answer else ""
                        written += f.write(_sample(i, questions[i], resp, subtask, gold, answer))
            (out / f"results_{date}.json").write_text(
                json.dumps(
                    {
                        "results": results,
                        "configs": configs,
                        "group_subtasks": {},
                        "n-samples": {t: {"original": ITEMS_PER_TASK, "effective": ITEMS_PER_TASK} for t in configs},
                        "config": {
                            "model": "vllm",
                            "model_args": {"pretrained": "m", "seed": s},
                            "gen_kwargs": {"seed": s},
                            "random_seed": 0,
                        },
                    }
                )
            )
    return written


MEMORY_GB = 0.25  # the size of the memory check, written once with 1x and once with 4x longer responses
MIN_SHARE_OF_WC = 0.04  # the whole postforget-pair: at least this share of wc -l's throughput
MIN_SHARE_OF_WC_BARE = 0.06  # postforget-pair --no-analyses
MAX_RSS_MB = 1000.0
MAX_GROWTH = 1.25  # peak memory with 4x longer responses, at most this times the 1x case's
MIN_RESCORE_MB_S = 100.0


def measure_pair(args: list[str]) -> None:
    """In this (fresh) process: ``postforget-pair args``; prints the peak RSS of this process and of its workers."""
    from postforget_lmeval.cli import main as run

    code = run(args)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"rss_mb": max(own, workers)}))
    sys.exit(code)


def measure_read(before: str, after: str, jobs: int) -> None:
    """In this (fresh) process: the reading phase alone (find the runs of both sides, read every samples file);
    prints its seconds."""
    from postforget_lmeval.sources import ReadRequest, detect

    t = time.perf_counter()
    requests = []
    for root in (before, after):
        source = detect(root)
        requests += [ReadRequest(run, None, None) for run in source.find_runs(Path(root)).task_runs]
    source.read(requests, jobs, None)
    print(json.dumps({"seconds": time.perf_counter() - t}))


def _timed(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return seconds, proc.stdout


def _pair(root: Path, jobs: int, *extra: str) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one ``postforget-pair`` in a fresh process."""
    args = [str(root / "before"), str(root / "after"), "-o", str(root / "out"), "-q", "--no-plot", "--jobs", str(jobs)]
    seconds, out = _timed([sys.executable, __file__, "--measure-pair", *args, *extra])
    return seconds, json.loads(out.strip().splitlines()[-1])["rss_mb"]


def case(root: Path, jobs: int, repeat: int, full: bool = True) -> dict[str, float]:
    """The figures of one generated pair: best times of ``repeat`` runs, the highest peak memory; ``full``: also
    ``--rescore strict``, the start and imports alone and ``--no-analyses`` (else the plain pairing only)."""
    files = sorted(str(p) for p in root.rglob("samples_*.jsonl"))
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)  # the same page-cache state for all
    wc = min(_timed(["wc", "-l", *files])[0] for _ in range(repeat))
    read_cmd = [sys.executable, __file__, "--measure-read", str(root / "before"), str(root / "after"), str(jobs)]
    read = min(json.loads(_timed(read_cmd)[1].strip().splitlines()[-1])["seconds"] for _ in range(repeat))
    runs = [_pair(root, jobs) for _ in range(repeat)]
    out = {"mb": mb, "wc": wc, "read": read, "pair": min(t for t, _ in runs), "rss_mb": max(r for _, r in runs)}
    if full:
        runs = [_pair(root, jobs, "--rescore", "strict") for _ in range(max(1, repeat // 2))]
        out |= {"rescore": min(t for t, _ in runs), "rescore_rss_mb": max(r for _, r in runs)}
        # where the time goes: the start and imports alone, and the pairing without the analyses
        imports = [sys.executable, "-c", "import postforget_lmeval.cli.pair"]
        out["imports"] = min(_timed(imports)[0] for _ in range(repeat))
        out["bare"] = min(_pair(root, jobs, "--no-analyses")[0] for _ in range(repeat))
    return out


def bench(sizes: list[float], jobs: int, repeat: int, keep: bool) -> bool:
    base = Path(tempfile.mkdtemp(prefix="postforget-bench-", dir="/tmp"))
    print(f"data under {base}; jobs={jobs}; best of {repeat} runs")
    ok = True
    try:
        for i, gb in enumerate(sizes):
            root = base / f"size{i}"
            generate(root, tasks_for(gb))
            os.sync()  # else the kernel writes the new files back during the measurements
            r = case(root, jobs, repeat)
            shutil.rmtree(root)
            times = r["pair"] / r["wc"]
            print(
                f"{r['mb'] / 1e3:.2f} GB: wc -l {r['wc']:.2f} s ({r['mb'] / r['wc']:.0f} MB/s); reading alone "
                f"{r['read']:.2f} s ({r['mb'] / r['read']:.0f} MB/s, {100 * r['wc'] / r['read']:.0f}% of wc -l); "
                f"postforget-pair {r['pair']:.2f} s ({100 * r['wc'] / r['pair']:.0f}% of wc -l, "
                f"{times:.1f}x its time), peak {r['rss_mb']:.0f} MB; --rescore strict {r['rescore']:.2f} s "
                f"({r['mb'] / r['rescore']:.0f} MB/s), "
                f"peak {r['rescore_rss_mb']:.0f} MB"
            )
            print(
                f"  of which: start and imports {r['imports']:.2f} s; postforget-pair --no-analyses {r['bare']:.2f} s "
                f"({r['bare'] / r['wc']:.1f}x wc -l's time)"
            )
            ok &= _report([
                (f"postforget-pair >= {MIN_SHARE_OF_WC:.0%} of wc -l's throughput", 1 / times >= MIN_SHARE_OF_WC),
                (
                    f"postforget-pair --no-analyses >= {MIN_SHARE_OF_WC_BARE:.0%} of wc -l's throughput",
                    r["wc"] / r["bare"] >= MIN_SHARE_OF_WC_BARE,
                ),
                (f"--rescore strict >= {MIN_RESCORE_MB_S:g} MB/s", r["mb"] / r["rescore"] >= MIN_RESCORE_MB_S),
                (f"peak memory < {MAX_RSS_MB:g} MB", max(r["rss_mb"], r["rescore_rss_mb"]) < MAX_RSS_MB),
            ])  # fmt: skip
        rss = []
        for scale in (1, 4):
            root = base / f"memory{scale}"
            generate(root, tasks_for(MEMORY_GB), response_scale=scale)
            os.sync()
            r = case(root, jobs, 1, full=False)
            shutil.rmtree(root)
            rss.append(r["rss_mb"])
            print(f"{r['mb'] / 1e3:.2f} GB, responses x{scale}: peak {r['rss_mb']:.0f} MB")
        ok &= _report([(f"memory flat in response length (x4: <= {MAX_GROWTH:g}x)", rss[1] <= MAX_GROWTH * rss[0])])
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return ok


def _report(floors: list[tuple[str, bool]]) -> bool:
    """Prints whether each floor is met; True if all are."""
    for label, met in floors:
        print(f"  {label}: {'met' if met else 'NOT MET'}")
    return all(met for _, met in floors)


def main() -> None:
    if sys.argv[1:2] == ["--measure-pair"]:
        measure_pair(sys.argv[2:])
        return
    if sys.argv[1:2] == ["--measure-read"]:
        measure_read(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2", help="GB of sample logs (both sides together), comma-separated")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="reading processes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is reported")
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    args = parser.parse_args()
    ok = bench([float(s) for s in args.sizes.split(",")], args.jobs, args.repeat, args.keep)
    print("every floor met" if ok else "a floor is not met")


if __name__ == "__main__":
    main()
