"""``postforget-pair curve``: steps read only from names that state them (time never runs backwards), the
warnings ``chain`` gives, an output folder replaced whole as ``pair``'s is, and curve.png drawing curve.csv."""

from __future__ import annotations

import base64
import html
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from matplotlib.layout_engine import ConstrainedLayoutEngine

from postforget_lmeval.cli import main as postforget_pair
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.report import files, many
from postforget_lmeval.report.curve import (
    CURVE_COLUMNS,
    SteadyLosses,
    _pairs,
    curve_figure,
    curve_table,
    in_step_order,
    step_of,
    subtask_warnings,
    write_curve,
)
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run

METRICS = ["F_true", "F_max", "BT_true", "BT_max"]


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("step_0100", 100),
        ("checkpoint-500", 500),
        ("checkpoint_7", 7),
        ("global_step20", 20),
        ("STEP-3", 3),
        ("42", 42),
        ("step_-1", -1),
        ("-5", -5),
        ("step_1e3", None),
        ("checkpoint-500-v2", None),
        ("step_100_seed3", None),
        ("run_seed3", None),
        ("sft", None),
        ("model_v2", None),
        ("step_١٢", None),  # digits of another script
    ],
)
def test_a_step_is_read_only_from_a_name_that_states_it(name: str, step: int | None) -> None:
    assert step_of(Path("runs") / name) == step


def test_a_name_without_a_step_is_refused_naming_the_folder_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(PairingError, match=r"name of .*step_1e3: .*step_<N>.*--steps") as e:
        in_step_order([tmp_path / "step_0", tmp_path / "step_1e3"])
    assert "step_0," not in str(e.value)


def test_each_step_error_says_what_is_wrong_word_for_word() -> None:
    with pytest.raises(PairingError) as e:
        in_step_order(["runs/base", "runs/step_1", "runs/sft"])
    assert str(e.value) == (
        "cannot read a step from the name of runs/base, runs/sft: a run folder's name must end in step_<N> or "
        "checkpoint-<N>, or be <N>, with N a whole number (step_0100, checkpoint-500, step_-1); otherwise give every "
        "run's step in order with --steps (e.g. --steps 0,100,200)"
    )
    with pytest.raises(PairingError, match=r"^1 steps for 2 run directories: give one step per directory$"):
        in_step_order(["runs/a", "runs/b"], [5])
    with pytest.raises(
        PairingError, match=r"^the steps must increase along the chain \(one run per step\), got 0, 5, 5$"
    ):
        in_step_order(["runs/a", "runs/b", "runs/c"], [0, 5, 5])


def runs_at(tmp_path: Path, bits: dict[str, str], task: str = "arc_x") -> list[Path]:
    dirs = []
    for name, b in bits.items():
        dirs.append(tmp_path / name)
        write_run(dirs[-1], ours(task, b, k=4))
    return dirs


def test_a_negative_step_comes_first(tmp_path: Path) -> None:
    # step_-1 is the model before: item 0 is gained by step 0, not forgotten (step_-1 once read as step 1)
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_-1": "0111"})
    out = tmp_path / "out"
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(out), "-q", "--no-plot"]) == 0
    curve = pd.read_csv(out / "curve.csv")
    overall = curve[(curve["category"] == "OVERALL") & (curve["against"] == "first")].iloc[0]
    assert overall["step"] == 0
    assert overall["acc_before"] == 0.75 and overall["acc_after"] == 1.0
    assert overall["F_true"] == pytest.approx(0 - 0.25 * 0.75 * 0.0 / 3)
    assert overall["BT_true"] > 0


def test_the_curve_command_refuses_a_name_without_a_step(tmp_path: Path, capsys) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1e3": "0111"})
    out = tmp_path / "out"
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(out), "-q"]) == 1
    assert "step_1e3" in capsys.readouterr().err
    assert not out.exists()
    assert postforget_pair(["curve", *map(str, dirs), "--steps", "0,1000", "-o", str(out), "-q", "--no-plot"]) == 0


def test_steps_over_different_sub_benchmarks_are_warned_as_chain_warns(tmp_path: Path, capsys) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011", "step_2": "1001"})
    for d in (dirs[0], dirs[2]):  # step 1 lacks arc_y: OVERALL averages arc_x alone there, both at step 2
        write_run(d, ours("arc_y", "1100", k=4), model_dir="other")
    out = tmp_path / "out"
    assert postforget_pair(["chain", *map(str, dirs), "-o", str(tmp_path / "chain"), "-q", "--no-plot"]) == 0
    chain_err = " ".join(capsys.readouterr().err.split())
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(out), "-q", "--no-plot"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "step 1 lacks arc_y" in err and "OVERALL" in err
    said = re.search(r"step_0→step_1: \d+ warning\(s\), \d+ note\(s\)", chain_err)
    assert said and said[0] in err
    assert "step 1 lacks arc_y" in (out / "curve.html").read_text(encoding="utf-8")


def test_the_sub_benchmark_warning_names_at_most_five_missing_per_step() -> None:
    held = {10: "a", 20: "ab", 30: "abcdefg", 40: "bcdefg"}  # step 10 lacks six, step 20 five, step 40 one
    first = [SimpleNamespace(subtasks=pd.DataFrame({"subtask": [f"t_{c}" for c in h]})) for h in held.values()]
    assert subtask_warnings([0, *held], first) == [
        "the steps are paired over different sub-benchmarks (step 10 lacks t_b, t_c, t_d, t_e, t_f ...; step 20 "
        "lacks t_c, t_d, t_e, t_f, t_g; step 40 lacks t_a): the categories and OVERALL average other sub-benchmarks "
        "from one step to the next; evaluate every step on the same tasks (the pairs' reports in chain/ list what "
        "each lacks)"
    ]
    assert subtask_warnings([0, 10], first[2:3]) == []


def test_a_rerun_without_plot_leaves_no_stale_figure(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011"})
    out = tmp_path / "out"
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(out), "-q"]) == 0
    assert (out / "curve.png").is_file()
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(out), "-q", "--no-plot"]) == 0
    assert not (out / "curve.png").exists()
    assert not list((out / "chain").glob("*/forgetting.png"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "step_0", "step_1"]  # nothing left beside


def test_the_library_removes_its_figure_from_a_shared_folder(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011"})
    write_curve(dirs, tmp_path)  # the training probes' layout: the report beside the runs; drawn by default
    png = (tmp_path / "curve.png").read_bytes()
    assert [p.parent.name for p in (tmp_path / "chain").glob("*/forgetting.png")] == ["step1_step_1"]
    assert base64.b64encode(png).decode("ascii") in (tmp_path / "curve.html").read_text(encoding="utf-8")
    write_curve(dirs, tmp_path, plot=False)
    assert not (tmp_path / "curve.png").exists()
    assert "No figure (written with --no-plot)" in (tmp_path / "curve.html").read_text(encoding="utf-8")
    assert (tmp_path / "step_0").is_dir() and (tmp_path / "curve.csv").is_file()


def test_write_curve_returns_what_it_writes(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "110101", "step_10": "001101", "step_20": "010100"})
    out = tmp_path / "out"
    curve, written = write_curve(dirs, out, options=PairOptions(analyses=False), plot=False)
    assert curve.steps == [0, 10, 20]
    assert curve.chain == many.chain(list(map(str, dirs)))
    assert set(curve.results) == {spec.label for spec in curve.chain}
    assert (out / "curve.csv").read_text(encoding="utf-8") == curve.curve.to_csv(index=False)
    assert (out / "items.csv").read_text(encoding="utf-8") == curve.items.to_csv(index=False)
    # items 0 and 1 lost at step 10 (1 came back), 2 and 5 lost at the last step, nothing steady over 2 probes
    assert curve.steady == SteadyLosses(
        hold=2, forgotten=4, came_back=1, steady=0, undetermined=3, expected=None, floor_items=0, items=6
    )
    assert curve.warnings == []
    page = (out / "curve.html").read_text(encoding="utf-8")
    assert html.escape(curve.steady.sentence()) in page and "No figure (written with --no-plot)" in page
    assert written[-3:] == [out / "curve.csv", out / "items.csv", out / "curve.html"]
    assert set(written) == {p for p in out.rglob("*") if p.is_file() and p.name != files.MARKER}
    assert not (out / "curve.png").exists()


CURVE_UNDER_ASCII_LOCALE = """
import sys
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.report.curve import write_curve
write_curve(sys.argv[1:3], sys.argv[3], options=PairOptions(analyses=False), plot=False)
"""


def test_curve_html_is_written_in_utf8_under_an_ascii_locale(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011"})
    out = tmp_path / "out"
    env = paths.ascii_locale_env()
    run = subprocess.run([sys.executable, "-c", CURVE_UNDER_ASCII_LOCALE, *dirs, out], env=env, capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    page = (out / "curve.html").read_bytes().decode("utf-8")
    assert "Items forgotten at some step" in page and {c for c in page if ord(c) > 127}  # its own words, not ASCII


def test_the_options_and_the_overrides_reach_every_pair(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "0111", "step_1": "1011"})
    for d in dirs:
        write_run(d, ours("arc_y", "1100", k=4), model_dir="other")
    fast = PairOptions(analyses=False)
    only_x = PairOptions(exclude=("postforget_arc_y",), analyses=False)
    for name, options, overrides in (("options", only_x, {}), ("overrides", fast, {"exclude": ("postforget_arc_y",)})):
        curve, _ = write_curve(dirs, tmp_path / name, options=options, plot=False, **overrides)
        assert set(curve.items["subtask"]) == {"arc_x"} and len(curve.items) == 4
        assert set(curve.curve["acc_before"]) == {0.75}


def test_a_negative_hold_is_refused_before_any_pairing(tmp_path: Path) -> None:
    with pytest.raises(PairingError, match=r"^a steady loss is wrong over 0 or more later probes, not -1$"):
        write_curve([tmp_path / "step_0", tmp_path / "step_1"], tmp_path / "out", hold=-1)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_of_other_files_is_refused(tmp_path: Path, capsys) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011"})
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(mine), "-q", "--no-plot"]) == 1
    assert "holds files that no pairing wrote (e.g. notes.txt)" in " ".join(capsys.readouterr().err.split())
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_an_output_link_is_written_through_to_its_target(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "1111", "step_1": "1011"})
    target, link = tmp_path / "target", tmp_path / "link"
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(target), "-q"]) == 0
    link.symlink_to(target)
    assert postforget_pair(["curve", *map(str, dirs), "-o", str(link), "-q", "--no-plot"]) == 0
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert not (target / "curve.png").exists()  # the target holds the new set only
    assert (target / files.MARKER).is_file() and (target / "items.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "step_0", "step_1", "target"]


def test_curve_csv_holds_each_later_step_against_the_first_and_the_previous_run() -> None:
    # the pairs' macro rows only; tag t marks the pair: value t + j/10 per column j, +0.01 for OVERALL
    values = ["acc_before", "acc_after", "F_true", "F_true_std", "F_max", "BT_true", "BT_true_std", "BT_max"]
    names = [f"{v}_mean" if not v.endswith("_std") else v for v in values]

    def pair(tag: int) -> SimpleNamespace:
        rows = [
            {"average": average, "category": cat, "n_seeds": float(tag), "F_max_std": 9.0}
            | {n: tag + j / 10 + (cat == OVERALL) / 100 + (average == "micro") for j, n in enumerate(names)}
            for average, cat in (("macro", "Logic"), ("macro", OVERALL), ("micro", OVERALL))
        ]
        return SimpleNamespace(categories=pd.DataFrame(rows))

    table = curve_table([0, 10, 20], [pair(1), pair(2)], [pair(1), pair(3)])
    expected = pd.DataFrame(
        [
            {"step": step, "against": against, "category": cat}
            | {v: tag + j / 10 + (cat == OVERALL) / 100 for j, v in enumerate(values)}
            | {"n_seeds": tag}
            for step, against, tag in ((10, "first", 1), (10, "previous", 1), (20, "first", 2), (20, "previous", 3))
            for cat in ("Logic", OVERALL)
        ],
        columns=[
            "step", "against", "category", "acc_before", "acc_after", "F_true", "F_true_std", "F_max",
            "BT_true", "BT_true_std", "BT_max", "n_seeds",
        ],
    )  # fmt: skip
    pd.testing.assert_frame_equal(table, expected)


def test_each_later_run_is_taken_from_its_pair_with_the_first_and_with_the_previous() -> None:
    dirs = ["runs/step_0", "runs/step_1", "runs/step_2", "runs/step_3"]
    results = {spec.label: (spec.before[-1], spec.after[-1]) for spec in many.chain(dirs)}
    first, previous = _pairs(dirs, results)
    assert first == [("0", "1"), ("0", "2"), ("0", "3")]
    assert previous == [("0", "1"), ("1", "2"), ("2", "3")]


def test_the_figure_draws_curve_csv_against_the_first_run(tmp_path: Path) -> None:
    dirs = runs_at(tmp_path, {"step_0": "110101", "step_10": "001101", "step_20": "010100"})
    curve, _ = write_curve(dirs, tmp_path / "out", plot=False)
    table = pd.read_csv(tmp_path / "out" / "curve.csv")
    first = table[(table["against"] == "first") & (table["category"] == "OVERALL")]
    fig = curve_figure(curve.curve)
    panels = {ax.get_title(): ax for ax in fig.axes}
    assert len(panels) == table["category"].nunique()
    lines = {line.get_label(): line for line in panels["Overall"].get_lines()}
    assert set(lines) == {"F_true", "F_max", "BT_true", "BT_max"}
    for name, line in lines.items():
        assert list(line.get_xdata()) == [10, 20]
        np.testing.assert_allclose(line.get_ydata(), 100 * first[name].to_numpy())
        assert line.get_linestyle() == ("--" if name.endswith("_max") else "-")
    assert os.environ.get("MPLBACKEND", "") != "show"  # drawn off-screen


def test_the_figure_lays_out_one_panel_per_category_three_to_a_row() -> None:
    # four categories and OVERALL, two later steps: rows of three panels, OVERALL last, ceilings dashed
    cats = ["Science", "Knowledge", OVERALL, "Math", "Logic"]
    rows = [
        dict.fromkeys(CURVE_COLUMNS, 0.0)
        | {"step": step, "against": against, "category": cat, "n_seeds": 1}
        | {m: (0.5 if against == "previous" else (k + 1) / 100 + j / 10 + step / 1000) for j, m in enumerate(METRICS)}
        for step in (10, 20)
        for against in ("previous", "first")
        for k, cat in enumerate(cats)
    ]
    curve = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    fig = curve_figure(curve)
    assert tuple(fig.get_size_inches()) == pytest.approx((12.6, 6.0))
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    order = ["Knowledge", "Logic", "Math", "Science", OVERALL]
    assert [ax.get_title() for ax in fig.axes] == ["Knowledge", "Logic", "Math", "Science", "Overall"]
    assert [ax.get_subplotspec().get_geometry() for ax in fig.axes] == [(2, 3, i, i) for i in range(5)]
    for i, (ax, cat) in enumerate(zip(fig.axes, order)):
        k = cats.index(cat)
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("step", "% of items")
        assert {(line.get_visible(), line.get_alpha()) for line in ax.get_xgridlines() + ax.get_ygridlines()} == {
            (True, 0.3)
        }
        drawn = [
            (line.get_label(), line.get_color(), line.get_marker(), line.get_linestyle(), list(line.get_xdata()))
            for line in ax.get_lines()
        ]
        assert drawn == [
            ("F_true", "tab:red", "o", "-", [10, 20]),
            ("F_max", "tab:red", "None", "--", [10, 20]),
            ("BT_true", "tab:blue", "o", "-", [10, 20]),
            ("BT_max", "tab:blue", "None", "--", [10, 20]),
        ]
        for line in ax.get_lines():
            j = METRICS.index(line.get_label())
            np.testing.assert_allclose(line.get_ydata(), [100 * ((k + 1) / 100 + j / 10 + s / 1000) for s in (10, 20)])
        legend = ax.get_legend()
        if i == 0:
            assert [t.get_text() for t in legend.get_texts()] == ["F_true", "F_max", "BT_true", "BT_max"]
            assert {t.get_fontsize() for t in legend.get_texts()} == {7}
        else:
            assert legend is None
