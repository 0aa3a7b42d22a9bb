"""The figures of ``postforget-pair`` stay what they were before the package was restructured.

``tests/golden/<case>/`` holds the outputs that the code of commit 7caf5cf (before the restructuring) wrote
for each case below: real logs of ``../shared/reference``, LightEval runs written by LightEval itself,
lm-eval runs written by the pairing fixtures and a small bench pair. Every table must come out the same
(CSV and JSON by value, samples.parquet by content); timings and paths aside, and the bootstrap interval
bounds aside (their drawing changed: ``test_analyses`` checks their coverage). Figures added since (new
files, columns, summary keys) are allowed; every saved file, column and key must still be there, unchanged.
The case ``noise_floor`` (seeds unmatched and shared, repeats, clusters, a greedy side, log-likelihood scoring)
was added later, saved by the code that first built each side's floor from every seed it logged; it pins the
noise floor's figures, which the older cases predate.

Run ``python -m tests.test_figures_unchanged CASE`` only to add a new case: the goldens of the existing cases
must never be rewritten by the code they check.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from postforget_lmeval.scoring import EXTRACTOR_VERSION
from tests.helpers import paths

ROOT = paths.ROOT
GOLDEN = paths.TESTS / "golden"
LOGS = paths.REFERENCE / "lmeval_logs"
LIGHTEVAL = paths.FIXTURES / "lighteval"

# Columns whose values may change with the restructuring: the bootstrap's interval bounds (a new drawing), and
# reply lengths, now decoded characters where they were the bytes of the logged JSON string.
VOLATILE_COLUMNS = (
    "_lo",
    "_hi",
    "response_chars_before",
    "response_chars_after",
    "median_chars_before",
    "median_chars_after",
    "median_chars_before_mean",
    "median_chars_after_mean",
)
VOLATILE_SUMMARY = {"timing", "inputs", "output", "version", "created", "elapsed_s", "jobs"}
# The extractor's version is part of the rescoring scorer's name; the goldens were saved under version 2, and a
# later version that changes no figure of these cases only renames the scorer.
GOLDEN_SCORER, SCORER = "strict/2", f"strict/{EXTRACTOR_VERSION}"
# summary.json keys that only described the removed speed machinery (how many lines took the scanner's slow path)
REMOVED_SUMMARY = {"slow_path"}
# columns of a file that a later change replaced: subtasks.csv's ``replicate`` (the first replicate of a row) became
# ``replicates`` (how many) when inspect_ai epochs and lm-eval repeats became replicates under one seed
REMOVED_COLUMNS = {"subtasks.csv": ["replicate"]}


def _synthetic(root: Path) -> tuple[Path, Path]:
    """Postforget runs with 3 seeds a side, statuses, several k and categories (lm-eval 0.4.13's layout)."""
    from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

    rng = random.Random(7)
    for side, p in (("before", 0.7), ("after", 0.55)):
        for seed in (1, 2, 3):
            tasks: dict[str, list[str]] = {}
            for subtask, k, category in (
                ("mmlu_anatomy", 4.0, "Knowledge"),
                ("arc_easy", 4.0, "Knowledge"),
                ("bbh_navigate", 2.0, "Logic"),
                ("gpqa_diamond", 4.0, "Knowledge"),
                ("musr_team_allocation", 3.0, "Logic"),
            ):
                lines = []
                for i in range(30):
                    correct = int(rng.random() < p)
                    status = "answered" if correct or rng.random() < 0.7 else rng.choice(["no_answer", "invalid"])
                    answer = "A" if correct else (rng.choice("BCD") if status == "answered" else None)
                    record = pf_record(subtask, correct, k=k, category=category, answer=answer, status=status)
                    response = f"Reasoning about item {i}. " * rng.randint(1, 30) + (
                        f"Answer: {answer}" if answer else "I am not sure."
                    )
                    doc = {
                        "pf_question": f"Question {i} of {subtask}?",
                        "pf_options": [f"option {c}" for c in "ABCD"[: int(k)]],
                        "pf_gold": "A",
                        "pf_format": "letter",
                    }
                    lines.append(sample_line(i, None, doc=doc, record=record, response=response))
                tasks[f"postforget_{subtask}"] = lines
            write_run(root / side / f"seed{seed}", tasks, seed=seed, gen_kwargs={"temperature": 0.6, "seed": seed})
    return root / "before", root / "after"


def _noisy(root: Path) -> tuple[Path, Path]:
    """Seeds 1, 2 before and 1, 2, 3 after (seed 3 unmatched: the after side's floor reads it), sampled at 0.6 (so
    the shared seeds are flagged): MCTest with stories as clusters, ARC with two repeats per item, BBH navigate
    decoded greedily before (its seeds agree), and a log-likelihood task; the noise floor on each."""
    from tests.helpers.lmeval_runs import ordinary, pf_record, sample_line, write_run

    rng = random.Random(29)
    greedy = [int(rng.random() < 0.6) for _ in range(20)]

    def record(p: float, subtask: str, k: float, category: str, **extra: Any) -> dict[str, Any]:
        correct = int(rng.random() < p)
        return {**pf_record(subtask, correct, k=k, category=category, answer="A" if correct else "B"), **extra}

    for side, p in (("before", 0.7), ("after", 0.55)):
        for seed in (1, 2, 3) if side == "after" else (1, 2):
            tasks = {
                "postforget_mctest_main": [
                    sample_line(i, None, record=record(p, "mctest_main", 4.0, "Language", cluster=f"story {i // 4}"))
                    for i in range(24)
                ],
                "postforget_arc_easy": [
                    sample_line(i, None, record=[record(p, "arc_easy", 4.0, "Science") for _ in range(2)])
                    for i in range(20)
                ],
                "postforget_bbh_navigate": [
                    sample_line(
                        i,
                        None,
                        record=pf_record("bbh_navigate", b, k=2.0, category="Logic", answer="A" if b else "B")
                        if side == "before"
                        else record(p, "bbh_navigate", 2.0, "Logic"),
                    )
                    for i, b in enumerate(greedy)
                ],
                **ordinary("mc_task", "".join(str(int(rng.random() < p)) for _ in range(20)), n_options=4),
            }
            configs = {"postforget_arc_easy": {"repeats": 2}, "mc_task": {"output_type": "multiple_choice"}}
            gen = {"temperature": 0.6, "seed": seed}
            write_run(root / side / f"seed{seed}", tasks, seed=seed, gen_kwargs=gen, configs=configs)
    return root / "before", root / "after"


def _bench(root: Path) -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location("bench_pairing", ROOT / "scripts" / "bench_pairing.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench._extractor = lambda: "postforget-strict/2"  # what the logs say scored them, fixed with the golden
    bench.generate(root, 3, seed=0)
    return root / "before", root / "after"


def _logs(before: str, after: str) -> Callable[[Path], tuple[Path, Path]]:
    def inputs(_tmp: Path) -> tuple[Path, Path]:
        if not LOGS.is_dir():
            pytest.skip("the reference logs are not beside the checkout")
        return LOGS / before, LOGS / after

    return inputs


def _lighteval(version: str) -> Callable[[Path], tuple[Path, Path]]:
    return lambda _tmp: (LIGHTEVAL / version / "before", LIGHTEVAL / version / "after")


# name -> (inputs, extra options of postforget-pair)
CASES: dict[str, tuple[Callable[[Path], tuple[Path, Path]], list[str]]] = {
    "mmlu_stem": (_logs("mayflower_mmlu_stem/before", "mayflower_mmlu_stem/after"), []),
    "mmlu_stem_paper_k": (_logs("mayflower_mmlu_stem/before", "mayflower_mmlu_stem/after"), ["--chance-k", "paper"]),
    "gsm8k": (_logs("thesis_gsm8k/before_gpt2", "thesis_gsm8k/after_phi3_all"), []),
    "gsm8k_limit10": (_logs("thesis_gsm8k/before_gpt2", "thesis_gsm8k/after_phi3_limit10"), []),
    "copa": (_logs("errorbars_copa_trimmed/before", "errorbars_copa_trimmed/after"), []),
    "lighteval_v0_10": (_lighteval("v0_10"), []),
    "lighteval_v0_13": (_lighteval("v0_13"), []),
    "lighteval_v0_10_strict": (_lighteval("v0_10"), ["--rescore", "strict"]),
    "lighteval_v0_13_lighteval": (_lighteval("v0_13"), ["--rescore", "lighteval"]),
    "synthetic": (_synthetic, []),
    "synthetic_order": (_synthetic, ["--seed-match", "order"]),
    "synthetic_strict": (_synthetic, ["--rescore", "strict"]),
    "bench_small": (_bench, []),
    "noise_floor": (_noisy, []),
}


def produce(name: str, tmp: Path) -> tuple[Path, list[Path]]:
    """Run ``postforget-pair`` on case ``name``; its output folder and the input roots."""
    from postforget_lmeval.cli import main

    inputs, extra = CASES[name]
    before, after = inputs(tmp / "in")
    out = tmp / "out"
    code = main([str(before), str(after), "-o", str(out), "--no-plot", "-q", "--jobs", "1", *extra])
    assert code == 0, f"postforget-pair failed on case {name}"
    return out, [before, after, tmp / "in"]


def _strip_paths(value: Any, roots: list[Path]) -> Any:
    if isinstance(value, str):
        value = value.replace(SCORER, GOLDEN_SCORER)
        for i, root in enumerate(roots):
            value = value.replace(str(root), f"<root{i}>")
        return value
    if isinstance(value, dict):
        return {k: _strip_paths(v, roots) for k, v in value.items() if k not in VOLATILE_SUMMARY | REMOVED_SUMMARY}
    if isinstance(value, list):
        return [_strip_paths(v, roots) for v in value]
    return value


def _frame(df: pd.DataFrame, roots: list[Path]) -> pd.DataFrame:
    df = df[[c for c in df.columns if not str(c).endswith(VOLATILE_COLUMNS)]].copy()
    for column in df.columns:
        if pd.api.types.is_object_dtype(df[column]) or pd.api.types.is_string_dtype(df[column]):
            df[column] = df[column].map(lambda v: _strip_paths(v, roots) if isinstance(v, str) else v)
    return df.reset_index(drop=True)


def normalised(out: Path, roots: list[Path]) -> dict[str, Any]:
    """Every output table of a pairing, as values: paths made relative to the inputs, volatile parts dropped."""
    tables: dict[str, Any] = {}
    for path in sorted(out.iterdir()):
        if path.suffix == ".csv":
            tables[path.name] = _frame(pd.read_csv(path, keep_default_na=False, na_values=[""]), roots)
        elif path.name == "samples.parquet":
            tables[path.name] = _frame(pd.read_parquet(path), roots)
        elif path.name == "summary.json":
            tables[path.name] = _strip_paths(json.loads(path.read_text(encoding="utf-8")), roots)
    return tables


def save(name: str, tmp: Path) -> None:
    out, roots = produce(name, tmp)
    target = GOLDEN / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for fname, value in normalised(out, roots).items():
        if fname.endswith(".csv"):
            value.to_csv(target / fname, index=False)
        elif fname.endswith(".parquet"):
            value.to_parquet(target / fname, index=False)
        else:
            (target / fname).write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _golden(name: str) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    for path in sorted((GOLDEN / name).iterdir()):
        if path.suffix == ".csv":
            tables[path.name] = _frame(pd.read_csv(path, keep_default_na=False, na_values=[""]), [])
        elif path.suffix == ".parquet":
            tables[path.name] = _frame(pd.read_parquet(path), [])
        else:
            tables[path.name] = _strip_paths(json.loads(path.read_text(encoding="utf-8")), [])
    return tables


def _same_json(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(want) <= set(got), f"{where}: keys {sorted(set(want) - set(got))} lost"
        for key in want:
            _same_json(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same_json(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and isinstance(got, (int, float)):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), f"{where}: {got!r} != {want!r}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_equal_the_saved_ones(name, tmp_path):
    out, roots = produce(name, tmp_path)
    got, want = normalised(out, roots), _golden(name)
    assert set(want) <= set(got), f"files lost: {sorted(set(want) - set(got))}"
    for fname, table in want.items():
        if isinstance(table, pd.DataFrame):
            table = table.drop(columns=REMOVED_COLUMNS.get(fname, []), errors="ignore")
            # write and read back as the golden was, so both went through the same file format
            lost = [c for c in table.columns if c not in got[fname].columns]
            assert not lost, f"{name}/{fname}: columns lost: {lost}"
            new = got[fname][list(table.columns)]
            if fname.endswith(".csv"):
                (tmp_path / "cmp.csv").write_text(new.to_csv(index=False), encoding="utf-8")
                new = pd.read_csv(tmp_path / "cmp.csv", keep_default_na=False, na_values=[""])
            pd.testing.assert_frame_equal(new, table, check_dtype=False, rtol=1e-9, obj=f"{name}/{fname}")
        else:
            _same_json(got[fname], table, f"{name}/{fname}")


if __name__ == "__main__":
    import tempfile

    for case in sys.argv[1:] or sorted(CASES):
        with tempfile.TemporaryDirectory() as d:
            save(case, Path(d))
            print("saved", case)
