"""The models the results files name reach summary.json, report.md, report.html and the terminal."""

from __future__ import annotations

import json

from postforget_lmeval.cli import main
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run


def test_model_names_from_lmeval_model_args_reach_every_output(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"), model_args="pretrained=org/base-7b,dtype=bfloat16")
    write_run(a, ours("mmlu_x", "1010"), model_args={"pretrained": "org/instruct-7b", "dtype": "bfloat16"})
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "--no-plot"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["models"] == {"before": ["org/base-7b"], "after": ["org/instruct-7b"]}
    assert f"- before: `{b.resolve()}` (org/base-7b)" in (out / "report.md").read_text()
    assert "org/instruct-7b" in (out / "report.html").read_text()
    assert "org/base-7b → org/instruct-7b" in capsys.readouterr().out


def test_inspect_and_lighteval_logs_give_their_model_names(tmp_path):
    from postforget_lmeval.pairing.provenance import model_names

    inspect_log = next((paths.FIXTURES / "inspect" / "before_eval").glob("*.eval"))
    assert model_names([inspect_log]) == ["mockllm/base"]  # header.json's eval.model
    lighteval = next((paths.FIXTURES / "lighteval" / "v0_13" / "before").rglob("results_*.json"))
    assert model_names([lighteval]) == ["Qwen/Qwen2.5-7B"]
    assert model_names([tmp_path / "missing.json"]) == []
