"""``pair()``: the paper's figures for two directories of runs, then the analyses beyond the paper."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from postforget_lmeval.analyses import annotate
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.pair import item_loader, pair_runs
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.sources import Progress


def pair(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    options: PairOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> PairResult:
    """Pair the runs under ``before`` with those under ``after``, item by item.

    ``options`` (or the same names as keywords, e.g. ``pair(b, a, seed_match="order", analyses=False)``; ``format``
    as the command line spells ``source_format``): see :class:`PairOptions`. ``progress(done_bytes, total_bytes)``
    follows the reading. Raises :class:`~postforget_lmeval.PairingError` for input that would make the figures
    wrong.
    """
    options = PairOptions.of(options, **_cli_names(overrides))
    started = time.perf_counter()
    result = pair_runs(before, after, options, progress)
    if options.rescore:
        _note_not_rescored(result, options.rescore)
    analyses_started = time.perf_counter()
    if options.analyses:
        annotate(result, item_loader(result.samples))
    result.summary["tables"] = sorted(result.tables)
    timing = result.summary["timing"]
    timing["analyses_seconds"] = round(time.perf_counter() - analyses_started, 3)
    timing["total_seconds"] = round(time.perf_counter() - started, 3)
    return result


def pair_with_itself(before: str | os.PathLike[str], **overrides: Any) -> PairResult:
    """The runs under ``before`` paired with themselves (exact seeds, no analyses) through a mirror of links to its
    files, for what is planned or drawn from a before-run alone: the runs chosen, the checks made and the
    (sub-benchmark, doc_id) keys are exactly those of a later pairing with the after-run. ``overrides`` as for
    :func:`pair`. Each warning is kept once, as the before side says it."""
    root = Path(before)
    if not root.is_dir():
        raise PairingError(f"{before}: not a folder: give the --output_path of the before-run")
    with tempfile.TemporaryDirectory(prefix="postforget-before-") as mirror:
        for path in root.rglob("*"):
            if path.is_file():
                link = Path(mirror, path.relative_to(root))
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(path.resolve())
        result = pair(root, mirror, analyses=False, seed_match="exact", **overrides)
    result.warnings = [w for w in result.warnings if mirror not in w and not w.startswith("after")]
    return result


CLI_NAMES = {"format": "source_format"}
"""Keywords spelled as the command line's options (``--format``) -> the :class:`PairOptions` field."""


def _cli_names(overrides: dict[str, Any]) -> dict[str, Any]:
    """``format=`` as ``source_format=``; both at once is an error."""
    out = dict(overrides)
    for cli, field in CLI_NAMES.items():
        if cli in out:
            if field in out:
                raise TypeError(f"give {cli}= or {field}=, not both")
            out[field] = out.pop(cli)
    return out


def _note_not_rescored(result: PairResult, policy: str) -> None:
    """``--rescore`` leaves the runs it cannot rescore (ordinary lm-eval tasks: a logged 0/1, no answer format to
    re-extract) as logged: a note names them."""
    runs = [(side, r) for side, rs in result.summary["runs"].items() for r in rs if r.get("scored_by") == "logged"]
    if not runs:
        return
    tasks = sorted({r["task"] for _, r in runs})
    files = "; ".join(f"{side}: {r.get('samples') or r.get('results')}" for side, r in runs[:4])
    more = f"; and {len(runs) - 4} more" if len(runs) > 4 else ""
    result.notes.append(
        f"--rescore {policy} cannot rescore {len(runs)} run(s) of {', '.join(tasks)}: they are not postforget "
        "tasks (an ordinary lm-eval task logs its own 0/1 and no answer format to re-extract), so their logged "
        f"scores are used ({files}{more})"
    )
