"""The models the results files name reach summary.json, report.md, report.html and the terminal."""

from __future__ import annotations

import json
import subprocess
import sys

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


WRITE_UNDER_ASCII_LOCALE = """
import sys
from postforget_lmeval import pair, write_outputs
b, a, out = sys.argv[1:4]
write_outputs(pair(b, a, analyses=False), out, plot=False)
"""


def test_a_model_name_outside_ascii_is_written_as_is_in_utf8_under_an_ascii_locale(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"), model_args="pretrained=org/modèle-7b")
    write_run(a, ours("mmlu_x", "1010"), model_args="pretrained=org/modèle-7b-it")
    out = tmp_path / "out"
    env = paths.ascii_locale_env()
    run = subprocess.run([sys.executable, "-c", WRITE_UNDER_ASCII_LOCALE, b, a, out], env=env, capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    text = (out / "summary.json").read_bytes().decode("utf-8")
    models = '  "models": {\n    "before": [\n      "org/modèle-7b"\n    ],\n    "after": [\n      "org/modèle-7b-it"\n'
    assert text.startswith('{\n  "inputs": {\n    "before": ') and models in text and text.endswith("\n}\n")
