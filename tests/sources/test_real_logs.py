"""Pairing real lm-eval logs that others published, and the messages a user gets on them.

The logs live in the shared reference folder beside the checkout (never copied into the repo); each
figure checked here is recounted from the raw sample lines in the test itself.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.cli import main
from postforget_lmeval.pairing.results import PairingError
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_old_run, write_run

LOGS = paths.REFERENCE / "lmeval_logs"
pytestmark = pytest.mark.skipif(not LOGS.is_dir(), reason="the reference logs are not beside the checkout")


def recount(root: Path, metric: str = "acc", filter_: str | None = None) -> dict[tuple[str, int], int]:
    """(task, doc_id) -> 0/1 from every samples file of the newest run per task, read with json alone."""
    newest: dict[str, Path] = {}
    for path in sorted(root.rglob("samples_*.jsonl")):
        if any(part.startswith(".") for part in path.parts):
            continue
        task = re.match(r"samples_(.+)_\d{4}-\d{2}-\d{2}T", path.name)[1]
        if task not in newest or path.name > newest[task].name:
            newest[task] = path
    out = {}
    for task, path in newest.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            if filter_ is None or sample["filter"] == filter_:
                out[(task, sample["doc_id"])] = int(sample[metric])
    return out


def test_mmlu_stem_pair_matches_an_independent_recount():
    root = LOGS / "mayflower_mmlu_stem"
    result = pair(root / "before", root / "after", jobs=1, analyses=False)
    before, after = recount(root / "before"), recount(root / "after")
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for key in before.keys() & after.keys():
        counts[key[0]][f"n_{before[key]}{after[key]}"] += 1
    rows = result.subtasks.set_index("subtask")
    assert len(rows) == 19 == len(counts) and int(rows["n"].sum()) == 3153
    for subtask, c in counts.items():
        assert {n: int(rows.loc[subtask, n]) for n in ("n_11", "n_10", "n_01", "n_00")} == {
            n: c[n] for n in ("n_11", "n_10", "n_01", "n_00")
        }
    assert set(rows["k"]) == {4.0} and set(rows["category"]) == {"mmlu_stem"}
    assert result.summary["totals"]["unpaired_before"] == result.summary["totals"]["unpaired_after"] == 0
    assert not result.warnings  # the .ipynb_checkpoints copies are not runs, and a note says so
    assert [n for n in result.notes if "hidden folders are not searched" in n and ".ipynb_checkpoints" in n]


def test_gsm8k_results_named_by_output_path_and_one_sided_items_are_shown_and_fatal_with_strict(tmp_path, capsys):
    root = LOGS / "thesis_gsm8k"
    result = pair(root / "before_gpt2", root / "after_phi3_limit10", jobs=1, analyses=False)
    row = result.subtasks.iloc[0]
    b = recount(root / "before_gpt2", "exact_match", "strict-match")
    a = recount(root / "after_phi3_limit10", "exact_match", "strict-match")
    assert (row["subtask"], int(row["n"])) == ("gsm8k", 1)
    assert (int(row["acc_before"]), int(row["acc_after"])) == (b[("gsm8k", 0)], a[("gsm8k", 0)])
    unpaired = [w for w in result.warnings if "only on the after side" in w]
    assert unpaired == [
        "gsm8k seed 0: 9 item(s) only on the after side (doc_id 1, 2, 3, 4, 5, 6, 7, 8, ... (1 more)) cannot be "
        "paired and are left out of the figures (1 paired): run both sides on the same items (same --limit)"
    ]
    with pytest.raises(PairingError, match=r"--strict: gsm8k seed 0: 9 item\(s\) only on the after side"):
        pair(root / "before_gpt2", root / "after_phi3_limit10", jobs=1, strict=True, analyses=False)
    out = tmp_path / "out"
    assert main([str(root / "before_gpt2"), str(root / "after_phi3_limit10"), "-o", str(out), "-q", "--strict"]) == 1
    assert not out.exists()
    assert "9 item(s) only on the after side" in capsys.readouterr().err


def test_results_file_without_configs_is_read_with_a_note_not_skipped():
    root = LOGS / "errorbars_copa_trimmed"
    result = pair(root / "before", root / "after", jobs=1, analyses=False)
    row = result.subtasks.iloc[0]
    b, a = recount(root / "before"), recount(root / "after")
    assert (row["subtask"], int(row["n"]), row["k"]) == ("copa", 4, 2.0)  # k from the logged log-likelihoods
    assert (int(row["n_11"]), int(row["n_01"])) == (
        sum(b[d] & a[d] for d in b),
        sum((1 - b[d]) & a[d] for d in b),
    )
    assert any("have no 'configs'" in n and "read from their 'results' entries" in n for n in result.notes)
    assert not any("without a results file" in w for w in result.warnings)
    assert [w for w in result.warnings if "holds 4 of the 20 items" in w]  # trimmed: said, not hidden


@pytest.mark.parametrize("metric", [None, "acc_norm"])
def test_git_lfs_pointer_stubs_are_named_as_such(metric):
    root = LOGS / "lfs_leaderboard"
    with pytest.raises(PairingError) as e:
        pair(root / "before", root / "after", metric=metric, jobs=1, analyses=False)
    message = str(e.value)
    assert "Git LFS pointer stub" in message and "git lfs pull" in message and "(40 file(s) alike)" in message
    assert "malformed" not in message and "unknown metric" not in message
    assert "samples_hellaswag_2025-01-25T04-48-43.622918.jsonl is a Git LFS pointer stub (42.8 MB" in message


def test_long_messages_list_whole_names_and_count_the_rest(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    names_b = [f"subject_number_{i:02d}_before" for i in range(40)]
    names_a = [f"subject_number_{i:02d}_after" for i in range(40)]
    write_run(before, {k: v for n in names_b for k, v in ours(n, "10").items()})
    write_run(after, {k: v for n in names_a for k, v in ours(n, "10").items()})
    with pytest.raises(PairingError) as e:
        pair(before, after, jobs=1, analyses=False)
    message = str(e.value)
    listed = re.findall(r"subject_number_\d\d_(?:before|after)", message)
    assert listed == names_b[:10] + names_a[:10]  # every name whole, in order
    assert message.count("... (30 more)") == 2


@pytest.mark.parametrize("as_lines", [False, True])
def test_lmeval_0_4_0_layout_pairs_like_the_current_one(tmp_path, as_lines):
    bits = {"before": "1100", "after": "1010"}
    for side, b in bits.items():
        write_old_run(tmp_path / "old" / side, ours("mmlu_x", b), name="my_run.json", as_lines=as_lines)
        write_run(tmp_path / "new" / side, ours("mmlu_x", b), seed=None)
    old = pair(tmp_path / "old" / "before", tmp_path / "old" / "after", jobs=1, analyses=False)
    new = pair(tmp_path / "new" / "before", tmp_path / "new" / "after", jobs=1, analyses=False)
    columns = ["subtask", "n", "n_11", "n_10", "n_01", "n_00", "F_true", "BT_true"]
    assert old.subtasks[columns].to_dict("records") == new.subtasks[columns].to_dict("records")
    assert old.subtasks.iloc[0][["n_10", "n_01"]].tolist() == [1, 1]
    loaded = old.samples.iloc[0]
    from postforget_lmeval.sources import by_name

    item = by_name("lmeval").load_item(str(loaded["file_before"]), int(loaded["locator_before"]))
    assert item.doc_id == loaded["doc_id"] and item.question.startswith("Question")
