"""``load_item`` on every line of the real lm-eval logs against a plain ``json`` parse of the same line.

No ``except`` stands between the two: a line the reader cannot read fails the test instead of comparing
``None`` with ``None``. Files that are no JSON lines (Git LFS pointers, JSON arrays) are left to the
tests of those layouts.
"""

from __future__ import annotations

import json

from postforget_lmeval.sources import by_name

SOURCE = by_name("lmeval")


def test_every_real_line_reads_back_as_json_parses_it(reference_logs):
    checked = 0
    for path in sorted(reference_logs.rglob("samples_*.jsonl")):
        data = path.read_bytes()
        if not data.startswith(b"{"):
            continue
        offset = 0
        for raw in data.splitlines(keepends=True):
            sample = json.loads(raw)
            item = SOURCE.load_item(str(path), offset)
            assert item.doc_id == sample["doc_id"] and item.doc == sample["doc"], (path, offset)
            resps = sample["resps"]
            if isinstance(resps[0][0], str):  # generate_until: one text per replicate
                assert item.responses == resps[0], (path, offset)
            else:  # log-likelihood: one line naming each option's log-likelihood
                lls = [float(r[0][0]) for r in resps]
                assert item.responses == [
                    "log-likelihoods " + ", ".join(f"{chr(65 + i)} {v:.2f}" for i, v in enumerate(lls))
                ], (path, offset)
            offset += len(raw)
            checked += 1
    assert checked > 3000
