"""Many pairs at once: three named pairs and a chain, end to end on lm-eval output directories."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.report import many as multipair
from postforget_lmeval.report import paper_table as report
from tests.helpers.lmeval_runs import ours, write_run

# Four checkpoints of one model, two seeds each, two sub-benchmarks in two categories (10 items each).
STAGES = {
    "base": {0: ("1111111100", "1111100000"), 1: ("1111111010", "1111010000")},
    "sft": {0: ("1111110010", "1110001100"), 1: ("1111100011", "1111000011")},
    "rl": {0: ("1100110011", "1110001111"), 1: ("1011100011", "1111001011")},
    "merge": {0: ("1111111111", "1111111100"), 1: ("1111111110", "1111111100")},
}


def _stage(root: Path, name: str) -> Path:
    for seed, (piqa, arc) in STAGES[name].items():
        tasks = {**ours("piqa_main", piqa, k=2, category="Commonsense"), **ours("arc_easy", arc, category="Logic")}
        write_run(root / name / f"seed{seed}", tasks, seed=seed, model_args=f"pretrained=org/{name}")
    return root / name


@pytest.fixture()
def stages(tmp_path: Path) -> dict[str, Path]:
    return {name: _stage(tmp_path / "runs", name) for name in STAGES}


def _macro(out: Path, category: str) -> pd.Series:
    cats = pd.read_csv(out / "categories.csv")
    return cats[(cats["average"] == "macro") & (cats["category"] == category)].iloc[0]


def test_three_pairs_one_table(stages: dict[str, Path], tmp_path: Path) -> None:
    specs = [
        multipair.PairSpec("base→sft", str(stages["base"]), str(stages["sft"])),
        multipair.PairSpec("sft→rl", str(stages["sft"]), str(stages["rl"])),
        multipair.PairSpec("base→merge", str(stages["base"]), str(stages["merge"])),
    ]
    out = tmp_path / "out"
    results, written, _ = multipair.run_pairs(specs, out)
    assert list(results) == ["base→sft", "sft→rl", "base→merge"]
    for spec in specs:  # each pair's own outputs, report.html included: 2 sub-benchmarks x 2 seeds x 10 items
        assert pd.read_csv(out / spec.directory / "subtasks.csv")["n"].sum() == 40
        assert "| Overall |" in (out / spec.directory / "report.md").read_text(encoding="utf-8")
        assert "arc_easy" in (out / spec.directory / "report.html").read_text(encoding="utf-8")
        assert (out / spec.directory / "forgetting.png").read_bytes()[:4] == b"\x89PNG"
    for name in ("pairs.csv", "pairs_long.csv", "pairs.md", "pairs.html", "pairs.png"):
        assert out / name in written
    wide = pd.read_csv(out / "pairs.csv")
    assert list(wide.columns) == ["metric", "category", "base→sft", "sft→rl", "base→merge"]
    assert wide[["metric", "category"]].values.tolist() == [
        [m, c] for m in ("F_true", "BT_true") for c in ("Commonsense", "Logic", "Overall")
    ]
    # every cell is that pair's own macro figure, F_true ± std (F_max)
    for spec in specs:
        for metric, ceiling in (("F_true", "F_max"), ("BT_true", "BT_max")):
            row = _macro(out / spec.directory, "Logic")
            expected = report.cell(row[f"{metric}_mean"], row[f"{metric}_std"], row[f"{ceiling}_mean"])
            got = wide[(wide["metric"] == metric) & (wide["category"] == "Logic")][spec.label].iloc[0]
            assert got == expected
    long = pd.read_csv(out / "pairs_long.csv")
    assert len(long) == 3 * 2 * 3
    sft = long[(long["pair"] == "base→sft") & (long["category"] == "OVERALL") & (long["metric"] == "F_true")].iloc[0]
    assert sft["mean"] == pytest.approx(_macro(out / "base_sft", "OVERALL")["F_true_mean"])
    # two seeds a side: each pair's noise floor and the figure beyond it, as its own categories.csv has them
    assert sft["noise_floor"] == pytest.approx(_macro(out / "base_sft", "OVERALL")["F_true_noise_mean"])
    assert sft["beyond_noise"] == pytest.approx(_macro(out / "base_sft", "OVERALL")["F_true_beyond_noise_mean"])
    assert sft["beyond_noise_lo"] <= sft["beyond_noise"] <= sft["beyond_noise_hi"]
    assert "| Overall |" in (out / "pairs.md").read_text()
    html = (out / "pairs.html").read_text()
    assert 'id="pairs-table"' in html and "data:image/png;base64," in html and "base_sft/report.html" in html


def test_chain_pairs_each_step_and_each_stage_against_the_first(stages: dict[str, Path]) -> None:
    specs = multipair.chain([stages["base"], stages["sft"], stages["rl"]])
    assert [(s.label, Path(s.before).name, Path(s.after).name) for s in specs] == [
        ("base→sft", "base", "sft"),
        ("sft→rl", "sft", "rl"),
        ("base→rl", "base", "rl"),
    ]
    assert len({s.directory for s in specs}) == 3
    with pytest.raises(PairingError, match="at least two"):
        multipair.chain([stages["base"]])


def test_chain_from_the_command_line(stages: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "chain"
    assert main(["chain", str(stages["base"]), str(stages["sft"]), str(stages["rl"]), "-o", str(out), "-q"]) == 0
    wide = pd.read_csv(out / "pairs.csv")
    assert list(wide.columns)[2:] == ["base→sft", "sft→rl", "base→rl"]
    # arc_easy seed 0: sft 1110001100 -> rl 1110001111 (two gained); base 1111100000 -> rl (two lost, four gained)
    for directory, counts in (("step2_rl", (0, 2)), ("from_first_rl", (2, 4))):
        sub = pd.read_csv(out / directory / "subtasks.csv").astype({"seed": str}).set_index(["subtask", "seed"])
        assert tuple(sub.loc[("arc_easy", "0"), ["n_10", "n_01"]]) == counts, directory
        assert "arc_easy" in (out / directory / "report.html").read_text(encoding="utf-8")


def test_multi_from_the_command_line(stages: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "multi"
    argv = [
        "multi",
        "--pair",
        f"sft={stages['base']},{stages['sft']}",
        "--pair",
        f"rl={stages['sft']},{stages['rl']}",
        "--pair",
        f"merge={stages['base']},{stages['merge']}",
        "-o",
        str(out),
        "-q",
        "--chance-k",
        "paper",
    ]
    assert main(argv) == 0
    wide = pd.read_csv(out / "pairs.csv")
    assert list(wide.columns)[2:] == ["sft", "rl", "merge"]
    subtasks = pd.read_csv(out / "sft" / "subtasks.csv")
    assert set(subtasks.loc[subtasks["subtask"] == "piqa_main", "k"]) == {4.0}  # the paper's k, not PIQA's 2


def test_multi_prints_the_comparison_of_pairs_with_one_before(
    stages: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sft and merge share their before: the terminal gives their item-by-item comparison, as comparisons.csv has it."""
    out = tmp_path / "multi"
    pairs = ["--pair", f"sft={stages['base']},{stages['sft']}", "--pair", f"merge={stages['base']},{stages['merge']}"]
    assert main(["multi", *pairs, "-o", str(out), "--no-plot"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    compared = pd.read_csv(out / "comparisons.csv")
    (line,) = multipair.comparison_lines(compared)
    assert line.startswith("sft vs merge: F_true ")
    assert line in printed


@pytest.mark.parametrize("text", ["sft", "sft=a", "=a,b", "sft=a,b,c", "sft=a,"])
def test_malformed_pair_is_explained(text: str) -> None:
    with pytest.raises(PairingError, match="NAME=BEFORE_DIR,AFTER_DIR"):
        multipair.parse_pair(text)


def test_duplicate_labels_and_failing_pair_are_named(stages: dict[str, Path], tmp_path: Path) -> None:
    same = [multipair.PairSpec("x", str(stages["base"]), str(stages["sft"]))] * 2
    with pytest.raises(PairingError, match="share the label x"):
        multipair.run_pairs(same, tmp_path / "o1")
    bad = [multipair.PairSpec("broken", str(stages["base"]), str(tmp_path / "nowhere"))]
    with pytest.raises(PairingError, match=r"pair 'broken' \("):
        multipair.run_pairs(bad, tmp_path / "o2")


def test_a_pair_the_paper_measured_gets_the_papers_column(tmp_path: Path) -> None:
    for side, model in (("base", "Qwen/Qwen2.5-7B"), ("sft", "Qwen/Qwen2.5-7B-Instruct")):
        for seed, (piqa, arc) in STAGES[side].items():
            tasks = {**ours("piqa_main", piqa, k=2, category="Commonsense"), **ours("arc_easy", arc, category="Logic")}
            write_run(tmp_path / side / f"seed{seed}", tasks, seed=seed, model_args=f"pretrained={model}")
    specs = [multipair.PairSpec("7B instruct", str(tmp_path / "base"), str(tmp_path / "sft"))]
    multipair.run_pairs(specs, tmp_path / "out", plot=False)
    wide = pd.read_csv(tmp_path / "out" / "pairs.csv")
    assert list(wide.columns) == ["metric", "category", "7B instruct", "paper: Q2.5 Inst. (7B)"]
    paper_col = wide.set_index(["metric", "category"])["paper: Q2.5 Inst. (7B)"]
    assert paper_col[("F_true", "Commonsense")] == "5.4 ± 0.1 (60.8)"
    assert paper_col[("BT_true", "Overall")] == "11.0 ± 0.5 (62.1)"
    assert "paper: Q2.5 Inst. (7B)</b>" not in (tmp_path / "out" / "pairs.html").read_text()  # no link to a report


def test_chain_writes_the_item_by_pair_matrix(stages: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "chain"
    assert main(["chain", str(stages["base"]), str(stages["sft"]), str(stages["rl"]), "-o", str(out), "-q"]) == 0
    matrix = pd.read_parquet(out / "items_by_pair.parquet")
    assert list(matrix.columns) == [*multipair.ITEM_KEY, "base→sft", "sft→rl", "base→rl"]
    assert len(matrix) == 2 * 2 * 10  # two sub-benchmarks, two seeds, ten items
    row = matrix.set_index(["subtask", "seed", "doc_id"]).loc[("piqa_main", "0", 6)]
    # piqa seed 0, item 6: base 1, sft 0, rl 0
    assert (row["base→sft"], row["sft→rl"], row["base→rl"]) == ("1->0", "0->0", "1->0")
    row = matrix.set_index(["subtask", "seed", "doc_id"]).loc[("arc_easy", "1", 8)]
    # arc seed 1, item 8: base 0, sft 1, rl 1
    assert (row["base→sft"], row["sft→rl"], row["base→rl"]) == ("0->1", "1->1", "0->1")
