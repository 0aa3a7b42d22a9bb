"""Knowledge kept or lost, on hand-worked runs in lm-eval's sample format: a generative task and its log-likelihood
twin in each side's folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair, write_outputs
from postforget_lmeval.analyses import _knowledge as knowledge
from tests.helpers.lmeval_runs import ours, pf_record, sample_line, write_run

MC = {"output_type": "multiple_choice"}


def twin(subtask: str, bits: str, category: str) -> dict[str, list[str]]:
    """The twin ``postforget_<subtask>_ll``: item i's gold option ranked first when bit i is 1."""
    lines = []
    for i, b in enumerate(bits):
        rec = pf_record(subtask, int(b), category=category, variant="ll", answer="A" if b == "1" else "B")
        rec |= {
            "extractor": "loglikelihood",
            "option_ll": [-1.0, -5.0, -5.0, -5.0] if b == "1" else [-5.0, -1.0, -5.0, -5.0],
        }
        lines.append(sample_line(i, None, record=rec, n_options=4))
    return {f"postforget_{subtask}_ll": lines}


# item:            0123456789
ARC_GEN = ("1111100000", "1000011100")  # 1->0: items 1-4; 0->1: items 5-7
ARC_TWIN = ("0000011000", "0110000000")  # after: 1, 2 kept, 3, 4 lost; before: 5, 6 there, 7 not
PIQA_GEN = ("110", "001")  # 1->0: 0, 1; 0->1: 2
PIQA_TWIN = ("001", "100")  # after: 0 kept, 1 lost; before: 2 there
ANATOMY_GEN = ("10", "01")  # no twin: its flips have no label


def _side(root: Path, side: int, seed: int = 0) -> Path:
    tasks = {
        **ours("arc_easy", ARC_GEN[side]),
        **twin("arc_easy", ARC_TWIN[side], "Logic"),
        **ours("piqa_main", PIQA_GEN[side], k=2, category="Commonsense"),
        **twin("piqa_main", PIQA_TWIN[side], "Commonsense"),
        **ours("mmlu_anatomy", ANATOMY_GEN[side], category="Science/Tech"),
    }
    configs = {t: MC for t in tasks if t.endswith("_ll")}
    write_run(root, tasks, configs=configs, seed=seed)
    return root


@pytest.fixture(scope="module")
def paired(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("knowledge")
    return pair(_side(root / "before", 0), _side(root / "after", 1))


def test_headline_comes_from_the_generative_runs(paired) -> None:
    sub = paired.subtasks.set_index("subtask")
    assert sorted(sub.index) == ["arc_easy", "mmlu_anatomy", "piqa_main"]
    assert sub.loc["arc_easy", ["n_11", "n_10", "n_01", "n_00"]].tolist() == [1, 4, 3, 2]
    assert sub.loc["arc_easy", "task_before"] == "postforget_arc_easy"
    assert any("twin(s) beside their generative tasks" in n for n in paired.notes)


def test_every_flip_is_labelled_by_its_twin(paired) -> None:
    s = paired.samples.astype({"subtask": str}).set_index(["subtask", "doc_id"])["knowledge"]
    arc = [s[("arc_easy", i)] for i in range(10)]
    assert arc == ["", "kept", "kept", "lost", "lost", "there before", "there before", "not there before", "", ""]
    assert [s[("piqa_main", i)] for i in range(3)] == ["kept", "lost", "there before"]
    assert [s[("mmlu_anatomy", i)] for i in range(2)] == ["", ""]  # 1->0 and 0->1, but no twin


def test_shares_per_sub_benchmark_category_and_overall(paired) -> None:
    table = paired.tables["knowledge"].set_index(["level", "category", "subtask"])
    counts = table[list(knowledge.COUNTS)].astype(int)
    assert counts.loc[("subtask", "Logic", "arc_easy")].tolist() == [4, 2, 2, 3, 2, 1]
    assert counts.loc[("subtask", "Commonsense", "piqa_main")].tolist() == [2, 1, 1, 1, 1, 0]
    assert counts.loc[("category", "Logic", "")].tolist() == [4, 2, 2, 3, 2, 1]
    assert counts.loc[("overall", "OVERALL", "")].tolist() == [6, 3, 3, 4, 3, 1]
    assert "Science/Tech" not in table.index.get_level_values("category")
    overall = table.loc[("overall", "OVERALL", "")]
    assert (overall["kept_share"], overall["there_before_share"]) == (0.5, 0.75)
    assert table.loc[("subtask", "Logic", "arc_easy"), "there_before_share"] == pytest.approx(2 / 3)
    for share in knowledge.SHARES:
        lo, hi = table[f"{share}_lo"].to_numpy(), table[f"{share}_hi"].to_numpy()
        assert np.all((lo <= table[share].to_numpy()) & (table[share].to_numpy() <= hi))
    assert (overall["kept_share_lo"], overall["kept_share_hi"]) != (0.5, 0.5)  # resampled, not the point
    assert paired.summary["analyses"]["knowledge"]["n_10_kept"] == 3


def test_knowledge_csv_is_written(paired, tmp_path: Path) -> None:
    write_outputs(paired, tmp_path / "out", plot=False)
    csv = pd.read_csv(tmp_path / "out" / "knowledge.csv", keep_default_na=False)
    assert list(csv.columns) == list(knowledge.COLUMNS) and len(csv) == 2 + 2 + 1
    assert "knowledge" in pd.read_parquet(tmp_path / "out" / "samples.parquet")


def test_twins_alone_are_the_headline(tmp_path: Path) -> None:
    for side, bits in (("before", "1100"), ("after", "1010")):
        write_run(tmp_path / side, twin("arc_easy", bits, "Logic"), configs={"postforget_arc_easy_ll": MC})
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.subtasks.set_index("subtask").loc["arc_easy"]
    assert row[["n_11", "n_10", "n_01", "n_00"]].tolist() == [1, 1, 1, 1]
    assert row["task_before"] == "postforget_arc_easy_ll"
    assert [list(v) for v in result.samples["option_ll_before"]][0] == [-1.0, -5.0, -5.0, -5.0]  # read from the record
    assert "knowledge" not in result.tables and "knowledge" not in result.samples


def test_report_md_and_html_say_which_knowledge(paired, tmp_path: Path) -> None:
    write_outputs(paired, tmp_path / "out", plot=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "### Knowledge or format? The log-likelihood twins" in md
    assert "| OVERALL | 6 | 3 / 3 | 50.0% [" in md and "| 4 | 75.0% [" in md
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'id="knowledge"' in page
    # the cards: arc_easy's items 1, 2 kept, 3, 4 lost; piqa's 0 kept, 1 lost; 0->1: 5, 6, piqa 2 there, 7 not
    assert page.count("knowledge kept: the after model still ranks the gold option first") == 3
    assert page.count("knowledge lost: the after model no longer ranks the gold option first") == 3
    assert page.count("knowledge there before: the before model already ranked") == 3
    assert page.count("knowledge not there before") == 1


@pytest.mark.slow
def test_intervals_cover_the_known_share() -> None:
    """Simulated items of known truth: 1->0 with probability 0.5, then knowledge kept with probability 0.6
    (sub-benchmark a) or 0.3 (b), so the category's pooled share is 0.45. The 95% intervals cover the truth about
    95% of the time (measured: 0.935, 0.95, 0.935)."""
    rng = np.random.default_rng(7)
    truth = {"a": 0.6, "b": 0.3, "": 0.45}
    hits = {key: 0 for key in truth}
    sims = 200
    for _ in range(sims):
        frames = []
        for subtask in ("a", "b"):
            forgot = rng.random(80) < 0.5
            kept = rng.random(80) < truth[subtask]
            label = np.where(forgot, np.where(kept, knowledge.KEPT, knowledge.LOST), "")
            frames.append(pd.DataFrame({"category": "C", "subtask": subtask, "doc_id": range(80), "knowledge": label}))
        table = knowledge.knowledge_table(pd.concat(frames, ignore_index=True), n_boot=300, seed=int(rng.integers(1e9)))
        for row in table[table["level"] != "overall"].itertuples():
            hits[row.subtask] += row.kept_share_lo <= truth[row.subtask] <= row.kept_share_hi
    for key, n in hits.items():
        assert 0.90 <= n / sims <= 0.99, (key, n / sims)


def test_a_twin_alone_on_one_side_is_a_warning(tmp_path: Path) -> None:
    """Before ran the generative task and its twin, after only the twin: after's twin is its headline, paired with
    before's generated answers, which the user must hear of."""
    write_run(tmp_path / "before", {**ours("arc_easy", "10"), **twin("arc_easy", "11", "Logic")}, configs={})
    write_run(tmp_path / "after", twin("arc_easy", "01", "Logic"), configs={"postforget_arc_easy_ll": MC})
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.subtasks.set_index("subtask").loc["arc_easy"]
    assert (row["task_before"], row["task_after"]) == ("postforget_arc_easy", "postforget_arc_easy_ll")
    assert any("postforget_arc_easy_ll: beside its generative task on one side, alone" in w for w in result.warnings)


def test_rescoring_leaves_the_twins_as_scored(tmp_path: Path) -> None:
    """A twin's answer is the option of highest log-likelihood, not extracted text: --rescore keeps it and does not
    call it unrescorable."""
    _side(tmp_path / "before", 0), _side(tmp_path / "after", 1)
    result = pair(tmp_path / "before", tmp_path / "after", rescore="strict")
    rescore_warnings = [w for w in result.warnings if "cannot be rescored" in w]
    assert len(rescore_warnings) == 6  # the generative runs' docs here lack pf_options: 3 tasks x 2 sides
    assert not [w for w in rescore_warnings if "_ll_" in Path(w.split(": ")[1]).name]
    twins = result.twins[result.twins["subtask"] == "arc_easy"].set_index("doc_id").loc[range(5), "correct_after"]
    assert [int(v) for v in twins] == [0, 1, 1, 0, 0]  # ARC_TWIN's after bits for items 0-4
