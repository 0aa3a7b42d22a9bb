"""``postforget-pair subset`` → lm-eval's ``--samples`` JSON → an after-run of those items → ``postforget-pair
--weights``: the whole workflow on runs written like lm-eval's, and the messages of a bad inclusion file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

# before, per item: right under both seeds (0-5), mixed (6-8), wrong under both (9-19); after: per seed
BEFORE = {0: "111111111000000000000", 1: "111111000000000000000"}
AFTER = {0: "101111010011000000011", 1: "111011100001100000001"}


def _lines(task: str, bits: str, doc_ids: list[int]) -> dict[str, list[str]]:
    subtask = task.removeprefix("postforget_")
    return {task: [sample_line(i, None, record=pf_record(subtask, int(bits[i]))) for i in doc_ids]}


def _runs(root: Path, bits: dict[int, str], doc_ids: list[int]) -> None:
    for seed, seed_bits in bits.items():
        date = f"2025-01-0{seed + 1}T00-00-00.000001"
        write_run(root, _lines("postforget_logic_a", seed_bits, doc_ids), seed=seed, date=date)


def test_subset_samples_json_after_run_and_weighted_pairing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _runs(tmp_path / "before", BEFORE, list(range(21)))
    assert main([
        "subset", str(tmp_path / "before"), "--size", "10", "-o", str(tmp_path / "sub"), "--seed", "2",
        "--allocation", "forgetting",
    ]) == 0  # fmt: skip
    assert "--samples" in capsys.readouterr().err

    inclusion = pd.read_csv(tmp_path / "sub" / "inclusion.csv")
    assert len(inclusion) == 21 and inclusion["drawn"].sum() == 10
    strata = inclusion.groupby("stratum").agg(size=("doc_id", "size"), drawn=("drawn", "sum"), pi=("pi", "first"))
    # forgetting allocation of 10: size x factor = 6 x 1, 3 x 2, 12 x 0.5 for right, mixed, wrong: 3.33 each, but the
    # mixed stratum holds 3 (all drawn); the 7 left go 3.5 and 3.5, the tie to the first (right)
    assert strata.to_dict("index") == {
        "mixed": {"size": 3, "drawn": 3, "pi": 1.0},
        "right": {"size": 6, "drawn": 4, "pi": pytest.approx(4 / 6)},
        "wrong": {"size": 12, "drawn": 3, "pi": pytest.approx(3 / 12)},
    }
    chosen = json.loads((tmp_path / "sub" / "samples.json").read_text())
    drawn = sorted(inclusion.loc[inclusion["drawn"] == 1, "doc_id"].tolist())
    assert chosen == {"postforget_logic_a": drawn, "postforget_logic_a_base": drawn}

    _runs(tmp_path / "after", AFTER, chosen["postforget_logic_a"])  # what lm-eval --samples evaluates
    out = tmp_path / "out"
    weights = str(tmp_path / "sub" / "inclusion.csv")
    argv = [str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(out), "--weights", weights, "--strict"]
    code = main([*argv, "--fail-if", "F_true > 99"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "Design-weighted" in printed.out and "warning" not in printed.err
    assert f"{2 * 11} item(s) of the before-run outside the subset" in printed.err  # 11 undrawn items x 2 seeds

    # the design's figure by hand: per seed the weighted share of 1->0 items, then the mean over seeds
    pi = inclusion.set_index("doc_id")["pi"]
    by_seed = []
    for seed in (0, 1):
        flips = pd.Series({d: BEFORE[seed][d] == "1" and AFTER[seed][d] == "0" for d in drawn})
        by_seed.append((flips / pi[drawn]).sum() / (1 / pi[drawn]).sum())
    table = pd.read_csv(out / "design.csv")
    overall = table[table["category"] == "OVERALL"].iloc[0]
    assert overall["F"] == pytest.approx(sum(by_seed) / 2)
    assert (overall["items"], overall["drawn"], overall["paired"]) == (21, 10, 10)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["design"]["overall"]["F"] == pytest.approx(overall["F"])
    assert summary["design"]["allocation"] == "forgetting"
    assert summary["design"]["strata"] == {"logic_a": {"mixed": [3, 3], "right": [6, 4], "wrong": [12, 3]}}
    assert summary["design"]["interval"].startswith("estimate - b - 1.96 s")
    assert summary["totals"]["unpaired_undrawn"] == summary["design"]["unpaired_by_design"] == 2 * 11
    assert any("describe the items drawn" in n for n in summary["notes"]) and not summary["warnings"]
    # a release gate on a subset reads the design-weighted figure, not the sample's
    assert summary["gate"]["checks"][0]["value"] == pytest.approx(100 * overall["F_true"])


def test_a_drawn_item_the_after_run_lacks_is_warned_about_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _runs(tmp_path / "before", BEFORE, list(range(21)))
    assert main(["subset", str(tmp_path / "before"), "--size", "10", "-o", str(tmp_path / "sub"), "--seed", "2"]) == 0
    drawn = json.loads((tmp_path / "sub" / "samples.json").read_text())["postforget_logic_a"]
    _runs(tmp_path / "after", AFTER, drawn[1:])  # the first drawn item not evaluated
    capsys.readouterr()
    weights = str(tmp_path / "sub" / "inclusion.csv")
    argv = [str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(tmp_path / "out"), "--weights", weights]
    assert main(argv) == 0
    err = capsys.readouterr().err
    for seed in (0, 1):  # the pairing's warning names the drawn item only, not the 11 left out by design
        assert f"logic_a seed {seed}: 1 item(s) only on the before side (doc_id {drawn[0]}) cannot be paired" in err
    assert f"{2 * 11} item(s) of the before-run outside the subset, unpaired as drawn" in err
    assert "1 drawn item(s) missing from the after-run" in err
    assert main([*argv, "--strict"]) == 1
    assert f"--strict: logic_a seed 0: 1 item(s) only on the before side (doc_id {drawn[0]})" in capsys.readouterr().err


def test_a_size_beyond_the_before_run_says_what_can_be_drawn(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _runs(tmp_path / "before", BEFORE, list(range(21)))
    assert main(["subset", str(tmp_path / "before"), "--size", "30", "-o", str(tmp_path / "sub")]) == 1
    assert "30 items: draw between 6 and 21 of its 21 items" in capsys.readouterr().err
    assert not (tmp_path / "sub").exists()


def test_a_problem_of_the_before_run_is_printed_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _runs(tmp_path / "before", BEFORE, list(range(21)))
    log = next((tmp_path / "before").rglob("samples_*2025-01-01*.jsonl"))
    log.write_text(log.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    assert main(["subset", str(tmp_path / "before"), "--size", "10", "-o", str(tmp_path / "sub")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: before: {log}")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.drop(columns="pi"), "no column(s) pi"),
        (lambda t: t.assign(drawn=t["drawn"].where(t.index != 3, 2)), "line 5: drawn other than 0 or 1"),
        (lambda t: t.assign(pi=t["pi"].where(t.index != 0, 0.9)), "line 2: pi is not the drawn share"),
        (
            lambda t: t.assign(allocation=t["allocation"].where(t.index != 4, "forgetting")),
            "line 6: an allocation other than the first line's",
        ),
        (lambda t: t.assign(allocation="even"), "line 2: an allocation other than proportional or forgetting"),
    ],
)
def test_a_bad_inclusion_file_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture, edit, message) -> None:
    _runs(tmp_path / "before", BEFORE, list(range(21)))
    assert main(["subset", str(tmp_path / "before"), "--fraction", "0.5", "-o", str(tmp_path / "sub")]) == 0
    _runs(tmp_path / "after", AFTER, list(range(21)))
    path = tmp_path / "sub" / "inclusion.csv"
    edit(pd.read_csv(path)).to_csv(path, index=False)
    capsys.readouterr()
    assert (
        main([str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(tmp_path / "o"), "--weights", str(path)])
        == 1
    )
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_lm_eval_samples_json_evaluates_the_drawn_doc_ids(tmp_path: Path) -> None:
    """The real lm_eval with ``--samples samples.json``: the doc ids it logs are the ones drawn (its doc index is the
    pairing's doc_id), the ``_base`` variant reads the same documents, and the weighted pairing passes --strict."""
    from tests.helpers.lmeval_cli import logged_samples, run_hf
    from tests.helpers.taskfixtures import FIXTURES, write_overrides
    from tests.helpers.tinymodel import build_tiny_model

    rows = [json.loads(line) for line in (FIXTURES / "arc_challenge.jsonl").read_text(encoding="utf-8").splitlines()]
    data = tmp_path / "data"
    data.mkdir()
    many = [{**rows[i % 2], "id": f"q{i}", "question": f"{rows[i % 2]['question']} (variant {i})"} for i in range(12)]
    (data / "arc_challenge.jsonl").write_text("".join(json.dumps(r) + "\n" for r in many), encoding="utf-8")
    overrides = tmp_path / "tasks"
    overrides.mkdir()
    write_overrides(overrides, ["arc_challenge"], data=data)
    settings = {"dtype": "float32", "max_gen_toks": 8}
    run_hf(
        build_tiny_model(tmp_path / "m0", seed=0),
        overrides,
        ["postforget_arc_challenge"],
        tmp_path / "before",
        **settings,
    )
    assert main(["subset", str(tmp_path / "before"), "--size", "5", "-o", str(tmp_path / "sub")]) == 0
    chosen = json.loads((tmp_path / "sub" / "samples.json").read_text())
    run_hf(
        build_tiny_model(tmp_path / "m1", seed=1), overrides, ["postforget_arc_challenge_base"], tmp_path / "after",
        extra=["--samples", str(tmp_path / "sub" / "samples.json")], **settings,
    )  # fmt: skip
    logged = sorted(doc for _, doc in logged_samples(tmp_path / "after"))
    assert logged == chosen["postforget_arc_challenge_base"] == chosen["postforget_arc_challenge"]
    assert len(logged) == 5
    before = logged_samples(tmp_path / "before")
    after = logged_samples(tmp_path / "after")
    assert all(after[key]["doc"]["question"] == before[key]["doc"]["question"] for key in after)
    out = tmp_path / "out"
    weights = str(tmp_path / "sub" / "inclusion.csv")
    assert (
        main([str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(out), "--weights", weights, "--strict"]) == 0
    )
    overall = pd.read_csv(out / "design.csv").set_index("category").loc["OVERALL"]
    assert (overall["items"], overall["drawn"], overall["paired"]) == (12, 5, 5)
