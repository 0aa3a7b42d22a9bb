"""Reading LightEval details files: one row shape for 0.10 and 0.13, and the item table of a run.

0.10 writes flat columns (``example``, ``gold``, ``metrics``, ``predictions``, ``specifics`` ...);
0.13 three struct columns (``doc``, ``metric``, ``model_response``). Correctness is the logged
``extractive_match``, the answer LightEval's first extracted prediction, the response the first
generation (0.13 rescoring reads ``text_post_processed``, the text its metric saw). k is the number
of options in the query, else of the doc's choices (the paper's tasks log letters as choices).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from postforget_lmeval.sources._base import Problem, ReadRequest, RunRead, item_rows
from postforget_lmeval.sources._lighteval_items import HIDDEN_OPTIONS_K, METRIC, keys, subtask_of


def _letters(indices: Any) -> str:
    idx = indices if isinstance(indices, (list, tuple)) else [indices]
    return "".join(chr(65 + int(i)) for i in idx if i is not None and int(i) >= 0)


_V013_FIELDS = ("doc.query", "doc.choices", "doc.gold_index", "doc.specific", "metric", "model_response.text")
_V010_FIELDS = ("example", "gold", "metrics", "predictions", "specifics")
_NAN = float("nan")


def _has_field(schema: pa.Schema, dotted: str) -> bool:
    head, _, child = dotted.partition(".")
    if head not in schema.names:
        return False
    kind = schema.field(head).type
    return not child or (pa.types.is_struct(kind) and kind.get_field_index(child) >= 0)


def _first_lengths(texts: pa.ChunkedArray) -> list[float]:
    """Characters of each row's first generation, counted by Arrow (no Python strings); NaN if none."""
    counts = pc.list_value_length(texts).to_pylist()  # None for a null list: falsy like 0
    firsts = iter(pc.utf8_length(pc.list_flatten(pc.list_slice(texts, 0, 1))).to_pylist())
    return [_NAN if not n or (v := next(firsts)) is None else float(v) for n in counts]


def _texts(values: list[Any] | None, n: int) -> list[list[str]]:
    return [list(v or []) for v in values] if values is not None else [[] for _ in range(n)]


def rows_of(path: str, texts: bool = False, full: bool = False) -> list[dict[str, Any]]:
    """One dict per details row, the same fields for both versions.

    Only the fields pairing needs are read (token ids and log-probs stay on disk). The responses
    come back as text only with ``texts`` (rescoring; 0.13: also the post-processed text its metric
    saw) or ``full`` (the whole row with the prompt and the logged doc, for ``load_item``);
    otherwise only their lengths.
    """
    schema = pq.read_schema(path)
    v013 = "doc" in schema.names
    fields = list(_V013_FIELDS if v013 else _V010_FIELDS)
    if texts and v013:
        fields.append("model_response.text_post_processed")
    present = [f for f in fields if _has_field(schema, f)]
    table = pq.read_table(path, columns=None if full else present)
    n = table.num_rows
    if v013 and full:
        generations = pc.struct_field(table.column("model_response"), "text")
    else:
        name = "text" if v013 else "predictions"
        generations = table.column(name) if name in table.column_names else None
    chars = [_NAN] * n if generations is None else _first_lengths(generations)
    if v013:
        if full:
            docs, metrics, resps = (table.column(c).to_pylist() for c in ("doc", "metric", "model_response"))
        else:
            flat = [f.split(".")[-1] for f in present if "." in f]
            col = {f: table.column(f).to_pylist() for f in flat if texts or f != "text"}
            docs = [dict(zip(("query", "choices", "gold_index", "specific"), v)) for v in zip(
                *(col.get(k, [None] * n) for k in ("query", "choices", "gold_index", "specific")))]  # fmt: skip
            metrics = table.column("metric").to_pylist() if "metric" in present else [None] * n
            resps = [
                {"text": t, "text_post_processed": q}
                for t, q in zip(_texts(col.get("text"), n), _texts(col.get("text_post_processed"), n))
            ]
        return [
            {
                "query": doc.get("query") or "", "choices": list(doc.get("choices") or []),
                "gold": _letters(doc.get("gold_index")),
                "extracted": list((doc.get("specific") or {}).get("extracted_predictions") or []),
                "score": (metric or {}).get(METRIC), "responses": list(resp.get("text") or []),
                "scored_text": list(resp.get("text_post_processed") or []) or list(resp.get("text") or []),
                "response_chars": c, "prompt": resp.get("input"), "doc": doc,
            }
            for doc, metric, resp, c in zip(docs, metrics, resps, chars)
        ]  # fmt: skip
    cols = (*_V010_FIELDS, "full_prompt")
    wanted = [c for c in table.column_names if texts or full or c != "predictions"]
    data = {c: table.column(c).to_pylist() if c in wanted else [None] * n for c in cols}
    return [
        {
            "query": ex or "", "choices": [], "gold": "".join(g or []),
            "extracted": list((sp or {}).get("extracted_predictions") or []),
            "score": (m or {}).get(METRIC), "responses": list(pr or []), "scored_text": list(pr or []),
            "response_chars": c, "prompt": fp, "doc": {"example": ex, "gold": g, "specifics": sp},
        }
        for ex, g, m, pr, sp, fp, c in zip(*(data[c] for c in cols), chars)
    ]  # fmt: skip


def read_run(req: ReadRequest) -> RunRead:
    from postforget_lmeval.scoring.rescoring import rescore

    run, path = req.run, str(req.run.samples_path)
    subtask, category = subtask_of(run.task)
    fmt = "letters" if subtask == "saladbench_mrq" else "letter"
    try:
        rows = rows_of(path, texts=req.rescore is not None)
        unreadable = None
    except (pa.ArrowException, OSError) as exc:  # a truncated or foreign file, not a details parquet
        rows, unreadable = [], Problem(path, f"is not a readable parquet file ({exc}); task {run.task} skipped", "file")
    cols: dict[str, list[Any]] = {c: [] for c in (
        "doc_id", "doc_hash", "correct", "k", "answer", "gold", "status", "locator", "response_chars",
        "subtask", "category", *(("correct_logged",) if req.rescore else ()),
    )}  # fmt: skip
    missing = not_rescored = 0
    non_binary: list[Any] = []
    for i, (row, (doc_id, _, options, doc_hash)) in enumerate(zip(rows, keys(rows))):
        if row["score"] is None:
            missing += 1
            continue
        if row["score"] not in (0, 1):  # a partial score, or none that LightEval writes, is not a transition
            non_binary.append(row["score"])
            continue
        logged = int(row["score"])
        k = float(len(row["choices"]) or len(options)) or HIDDEN_OPTIONS_K.get(subtask)  # None: NaN in the table
        answer = row["extracted"][0] if row["extracted"] else None
        status = "answered" if answer else "no_answer"
        correct = logged
        if req.rescore:
            if options and row["gold"] and row["scored_text"]:
                got = rescore(row["scored_text"][0], options, row["gold"], fmt, req.rescore)
                answer, status, correct = got.answer, got.status, got.correct
            else:
                not_rescored += 1
            cols["correct_logged"].append(logged)
        for name, value in (
            ("doc_id", doc_id), ("doc_hash", doc_hash),
            ("correct", correct), ("k", k), ("answer", answer), ("gold", row["gold"] or None), ("status", status),
            ("locator", i), ("response_chars", row["response_chars"]),
            ("subtask", subtask), ("category", category),
        ):  # fmt: skip
            cols[name].append(value)
    problems = [unreadable] if unreadable else []
    if missing:
        problems.append(Problem(path, f"{missing} row(s) without metric {METRIC} skipped", "no_metric", missing))
    if non_binary:
        examples = ", ".join(repr(v) for v in non_binary[:5])
        problems.append(Problem(
            path, f"{len(non_binary)} row(s) with a non-binary {METRIC} (e.g. {examples}) skipped: a score in (0,1) "
            "is not a transition", "non_binary", len(non_binary),
        ))  # fmt: skip
    if not_rescored:
        problems.append(Problem(
            path, f"{not_rescored} row(s) cannot be rescored (no options in the prompt or no gold); their logged "
            "score is used", "not_rescored", not_rescored,
        ))  # fmt: skip
    if run.n_expected is not None and len(rows) < run.n_expected:
        problems.append(
            Problem(path, f"holds {len(rows)} of the {run.n_expected} items LightEval evaluated", "incomplete")
        )
    info = {"filter": "none", "metric": METRIC, "lines": len(rows), "items": len(set(cols["doc_id"])), "extractors": []}
    return RunRead(req, item_rows(run, path, cols), problems, [], info)
