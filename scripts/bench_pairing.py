"""Throughput and memory of ``postforget-pair`` on generated lm-eval sample logs (``make bench``).

For each size (GB of sample logs, both sides together) it writes a before and an after directory
laid out and serialised like lm-eval 0.4.13 (``samples_<task>_<time>.jsonl`` lines of
chain-of-thought responses of 2-8 KB, 3 seeds), then, in one run on the same files:

* ``wc -l`` over them (the floor: reading the bytes and counting newlines);
* the whole ``postforget-pair --no-plot`` process, in a fresh interpreter, with its phases
  (start-up and imports, reading, pairing and tables, analyses, writing) and peak memory;
* the same with ``--rescore strict``: every response re-read by the extractor.

A last case repeats a small case's samples (``--memory-gb``) with 4x longer responses: same samples,
~4x the bytes, so its memory shows whether memory grows with response length (it should not).
Generated data lives under a temporary directory in /tmp and is deleted at the end (``--keep`` to
keep it).

    python scripts/bench_pairing.py [--sizes 2] [--jobs N] [--repeat 3] [--memory-gb 0.25] [--keep]
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
    line_bytes = len(_sample(0, _text(rng, 500), _text(rng, 5000), "mmlu_s0", "B", "B"))  # ~12 KB: response logged twice
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


def measure(before: str, after: str, out: str, jobs: str | None, extra: list[str]) -> None:
    """Run in a fresh process: the pairing CLI in-process, its phases, its own and its workers' peak RSS."""
    t = time.perf_counter()
    from postforget_lmeval.cli import main as run

    imports = time.perf_counter() - t
    argv = [before, after, "-o", out, "-q", "--no-plot"] + (["--jobs", jobs] if jobs else [])
    code = run(argv + extra)  # what the console script runs
    in_process = time.perf_counter() - t
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        json.dumps(
            {
                "code": code,
                "imports": imports,
                "in_process": in_process,
                "rss_main_mb": own / 1024,
                "rss_worker_mb": workers / 1024,
            }
        )
    )


def measure_read(before: str, after: str, jobs: str | None) -> None:
    """In a fresh process: the sources' reading alone (what the read phase does without the imports beside it)."""
    from postforget_lmeval.pairing import reading

    _, seconds = reading.start(before, after, jobs=int(jobs) if jobs else None).collect()
    print(json.dumps({"read_only": seconds}))


def _read_only(root: Path, jobs: str | None) -> float:
    cmd = [sys.executable, __file__, "--measure-read", str(root / "before"), str(root / "after"), jobs or ""]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])["read_only"]


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("samples_*.jsonl"))


def _pairing_run(root: Path, jobs: str | None, *extra: str) -> dict[str, float]:
    """One `postforget-pair` in a fresh process: wall time, phase times, peak RSS."""
    out = root / "out"
    cmd = [sys.executable, __file__, "--measure", str(root / "before"), str(root / "after"), str(out), jobs or ""]
    t = time.perf_counter()
    proc = subprocess.run([*cmd, *extra], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"pairing failed:\n{proc.stderr}")
    timing = json.loads((out / "summary.json").read_text())["timing"]
    run = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "wall": wall,
        "startup": wall - run["in_process"] + run["imports"],  # interpreter start-up and imports
        "read": timing["read_seconds"],
        "pair": timing["total_seconds"],
        "analyses": timing.get("analyses_seconds", 0.0),
        "write": run["in_process"] - run["imports"] - timing["total_seconds"],
        **run,
    }


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    best = min(runs, key=lambda r: r["wall"])
    return {
        **best,
        "read": min(r["read"] for r in runs),
        "rss_main_mb": max(r["rss_main_mb"] for r in runs),
        "rss_worker_mb": max(r["rss_worker_mb"] for r in runs),
    }


def bench(sizes: list[float], jobs: str | None, keep: bool, repeat: int, memory_gb: float) -> None:
    base = Path(tempfile.mkdtemp(prefix="postforget-bench-", dir="/tmp"))
    print(f"data under {base}; best of {repeat} runs per case, jobs={jobs or 'CPUs available'}")
    # the sizes with 2-8 KB responses, then a small case's items with 4x longer responses: the same
    # number of samples, so the same memory if memory does not grow with response length
    small = [s for s in sizes if s <= memory_gb] or [memory_gb]
    cases = [(f"{s:g}", tasks_for(s), 1) for s in sorted(set(sizes) | {small[0]})]
    cases.append((f"{small[0]:g} x4 resp", tasks_for(small[0]), 4))
    rows = []
    try:
        for label, n_tasks, scale in cases:
            root = base / f"case{len(rows)}"
            t = time.perf_counter()
            n_bytes = generate(root, n_tasks, scale)
            print(f"generated {n_bytes / 1e9:.2f} GB ({label}) in {time.perf_counter() - t:.0f}s", flush=True)
            os.sync()  # the kernel would write the new files back to disk ~30 s later, during the measurements
            files = _files(root)
            subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)  # same page-cache state for all
            wc_times = []
            for _ in range(repeat):
                t = time.perf_counter()
                wc = subprocess.run(["wc", "-l", *files], capture_output=True, text=True, check=True)
                wc_times.append(time.perf_counter() - t)
            read_only = min(_read_only(root, jobs) for _ in range(repeat))
            fast = _best([_pairing_run(root, jobs) for _ in range(repeat)])
            bare = _best([_pairing_run(root, jobs, "--no-analyses") for _ in range(repeat)])
            rescored = _best([_pairing_run(root, jobs, "--rescore", "strict") for _ in range(max(1, repeat // 2))])
            rows.append(
                {
                    "case": label,
                    "bytes": n_bytes,
                    "lines": int(wc.stdout.strip().splitlines()[-1].split()[0]),
                    "wc": min(wc_times),
                    "read_only": read_only,
                    "fast": fast,
                    "bare": bare,
                    "rescored": rescored,
                }
            )
            print(f"  done: {json.dumps(rows[-1], default=str)}", flush=True)
            shutil.rmtree(root)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    _print(rows)


def _print(rows: list[dict]) -> None:
    print(
        f"\n{'case (GB)':>12} {'GB':>5} {'lines':>7} {'wc -l s':>7} {'wc MB/s':>7} | {'reading MB/s':>12} | "
        f"{'pair s':>6} {'% wc':>5} "
        f"{'start':>5} {'read':>5} {'join':>5} {'anal.':>5} {'write':>5} {'read MB/s':>9} {'RSS MB':>6} {'wkr MB':>6} | "
        f"{'no-anal. s':>10} {'% wc':>5} | {'rescore s':>9} {'% wc':>5} {'read MB/s':>9} {'RSS MB':>6} {'wkr MB':>6}"
    )
    for r in rows:
        mb, f, b, x = r["bytes"] / 1e6, r["fast"], r["bare"], r["rescored"]
        print(
            f"{r['case']:>12} {r['bytes'] / 1e9:>5.2f} {r['lines']:>7} {r['wc']:>7.2f} {mb / r['wc']:>7.0f} | "
            f"{mb / r['read_only']:>12.0f} | {f['wall']:>6.2f} {100 * r['wc'] / f['wall']:>4.0f}% {f['startup']:>5.2f} {f['read']:>5.2f} "
            f"{f['pair'] - f['read'] - f['analyses']:>5.2f} {f['analyses']:>5.2f} {f['write']:>5.2f} "
            f"{mb / f['read']:>9.0f} {f['rss_main_mb']:>6.0f} {f['rss_worker_mb']:>6.0f} | "
            f"{b['wall']:>10.2f} {100 * r['wc'] / b['wall']:>4.0f}% | "
            f"{x['wall']:>9.2f} {100 * r['wc'] / x['wall']:>4.0f}% {mb / x['read']:>9.0f} "
            f"{x['rss_main_mb']:>6.0f} {x['rss_worker_mb']:>6.0f}"
        )
    print(
        "reading MB/s: the sources' reading alone (reading.start + collect, fresh process, best of the runs). "
        "pair s: wall time of the whole `postforget-pair --no-plot` process, best of the runs; % wc: wc -l's time as a "
        'share of it (= throughput relative to wc -l). Its phases: start (interpreter start-up and the light imports), '
        'read (the log-reading phase; pandas and the renderers are imported meanwhile), join (seed plan, join, tables),'
        " anal. (the analyses), write (every output file but the optional plot). read MB/s: the logs' bytes over the "
        "read phase. no-anal.: the same with --no-analyses (the paper's figures only). rescore: with --rescore strict "
        '(every response re-read by the extractor). RSS: peak resident set of the main process and of the largest child'
        " process (a reading worker; on large pairs also the bootstrap's process, whose pages are mostly shared with "
        "the main one). 'x4 resp': the small case's samples with 4x longer responses."
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        measure(*sys.argv[2:5], sys.argv[5] or None, sys.argv[6:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--measure-read":
        measure_read(sys.argv[2], sys.argv[3], sys.argv[4] or None)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2", help="GB of sample logs (both sides together), comma-separated")
    parser.add_argument("--jobs", help="reading processes (default: CPUs available)")
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported (default 3)")
    parser.add_argument(
        "--memory-gb", type=float, default=0.25, help="size of the memory check: this size, then 4x longer responses"
    )
    args = parser.parse_args()
    bench([float(s) for s in args.sizes.split(",")], args.jobs, args.keep, args.repeat, args.memory_gb)


if __name__ == "__main__":
    main()
