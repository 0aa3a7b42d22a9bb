"""Probes of an FSDP-sharded model: two CPU processes (gloo) shard a tiny GPT-2 with torch's ``fully_shard``, every
rank joins the gathering of the weights at each probe, the main process evaluates a plain copy and alone writes
the probes; they equal the probes of the same model unsharded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postforget_lmeval.training import Probes
from tests.helpers.tinymodel import build_tiny_model
from tests.training.words import task, texts

pytestmark = pytest.mark.slow

WORLD = 2


def _sharded_run(rank: int, init: str, model_dir: str, include: str, out: str) -> None:
    """One rank of the sharded training: a probe at step 0, one optimizer step, a probe at step 1."""
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from postforget_lmeval.training.probes import on_main

    dist.init_process_group("gloo", init_method=f"file://{init}", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    for block in model.transformer.h:
        fully_shard(block)
    fully_shard(model)
    probes = Probes(["probe_words"], out, include_path=include)

    def first(full) -> None:
        probes.check_output_dir()
        probes.wrap(full, tokenizer)
        probes.start(full, 0)

    full = probes.full(model)
    assert (full is None) == (rank != 0)
    on_main(lambda: first(full), "the first probe")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    batch = tokenizer(texts(1)[rank * 4 : rank * 4 + 4], return_tensors="pt", padding=True)
    model(**batch, labels=batch["input_ids"]).loss.backward()
    optimizer.step()
    full = probes.full(model)
    on_main(lambda: probes.probe(full, 1), "the probe at step 1")
    dist.barrier()  # neither rank tears gloo down while the other is still in a collective
    dist.destroy_process_group()


def test_probes_of_a_sharded_model_equal_those_of_the_model_unsharded(tmp_path: Path) -> None:
    import torch.multiprocessing as mp
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = build_tiny_model(tmp_path / "model")
    include = task(tmp_path)
    sharded = tmp_path / "sharded"
    mp.spawn(_sharded_run, args=(str(tmp_path / "init"), str(model_dir), str(include), str(sharded)), nprocs=WORLD)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(model_dir), AutoTokenizer.from_pretrained(model_dir)
    plain = Probes(["probe_words"], tmp_path / "plain", include_path=include)
    plain.wrap(model, tokenizer)
    plain.start(model, 0)

    assert sorted(p.name for p in sharded.iterdir()) == ["probes.json", "step_0000", "step_0001"]
    assert [p["step"] for p in json.loads((sharded / "probes.json").read_text())["probes"]] == [0, 1]
    at_start = _responses(sharded / "step_0000")
    assert len(at_start) == 24
    assert at_start == _responses(tmp_path / "plain" / "step_0000")
    assert _responses(sharded / "step_0001") != at_start  # the probe at step 1 read the trained weights


def _responses(run: Path) -> dict[int, tuple]:
    """doc_id -> (acc, the log-likelihoods of the options) from a probe's sample log."""
    (path,) = run.rglob("samples_probe_words_*.jsonl")
    lines = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    return {s["doc_id"]: (s["acc"], [round(float(r[0][0]), 4) for r in s["resps"]]) for s in lines}
