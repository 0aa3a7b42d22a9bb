"""The failure-mode split, the refusal rule and the behaviour columns on crafted samples."""

from __future__ import annotations

import math
from dataclasses import dataclass
from re import _constants as C  # noqa: N812 - the regex parser's opcodes, to expand the phrases
from re import _parser as re_parser
from typing import Any

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses._failure_modes import answered, behaviour, item_modes, mode_counts
from postforget_lmeval.scoring.refusal import CUES, PHRASES, edge_sentences, is_refusal
from tests.helpers.lmeval_runs import LONG_RESPONSE, pf_record, sample_line, write_run


@pytest.mark.parametrize(
    "reply",
    [
        "I'm sorry, but I can't help with that request.",
        "I cannot assist with this question. It asks for harmful information.",
        "Let me look at the options.\nThe question is about weapons.\nAs an AI, I won't provide that.",
        "<think>The user wants X. I should not.</think>I must decline to answer this.",
        "I\u2019m unable to answer questions like this one.",
    ],
)
def test_refusals(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "Step 1: compute 3 + 4 = 7. The answer is probably B but I am not sure",
        # refusal words in the middle of a reasoning reply, not in its first or last sentence
        "First, list the facts. We cannot assume the gas is ideal. "
        "I cannot answer without the pressure, so use it. Done",
        # refusal words only inside the reasoning trace
        "<think>I can't answer this easily. Let me try.</think>The total is 12 apples",
        "The capital of France is Paris.",
    ],
)
def test_not_refusals(reply: str) -> None:
    assert not is_refusal(reply)


def test_edge_sentences() -> None:
    assert edge_sentences("One. Two! Three?\nFour") == ["One.", "Four"]
    assert edge_sentences("Only one") == ["Only one"]
    assert edge_sentences("  \n ") == []


@dataclass
class _Item:
    responses: list[str]


REPLIES = {
    10: "I'm sorry, but I can't help with that.",
    11: "Hmm, the options all look similar and I would pick",
    12: "x" * 5000,  # a bare thinking trace, long enough to have hit max_gen_toks = 1000
    13: "I cannot answer this. " + "y" * 100,
}


def _samples() -> pd.DataFrame:
    rows = [
        # doc_id, transition, status after, answer after, chars after, status before
        (0, "1->0", "answered", "B", 800.0, "answered"),  # wrong answer: knowledge
        (1, "1->0", "invalid", "F", 900.0, "answered"),
        (2, "1->0", "unfinished", None, 3900.0, "answered"),  # unclosed <think>: cut
        (3, "1->0", "no_answer", None, 2500.0, "answered"),  # long, no answer: cut, no load needed
        (10, "1->0", "no_answer", None, 38.0, "answered"),  # refusal
        (11, "1->0", "no_answer", None, 50.0, "answered"),  # plain no answer
        (12, "1->0", "no_answer", None, np.nan, "answered"),  # length only in the loaded reply: cut
        (20, "0->1", "answered", "A", 500.0, "no_answer"),  # before side unanswered
        (13, "0->1", "answered", "A", 500.0, "no_answer"),  # before side refused (first sentence)
        (30, "1->1", "answered", "A", 400.0, "answered"),
        (31, "0->0", "no_answer", None, 100.0, "answered"),
    ]
    frame = pd.DataFrame(
        rows, columns=["doc_id", "transition", "status_after", "answer_after", "response_chars_after", "status_before"]
    )
    return frame.assign(
        subtask="s",
        category="C",
        seed="0",
        replicate=0,
        answer_before="A",
        response_chars_before=300.0,
        file_before="b.jsonl",
        file_after="a.jsonl",
        locator_before=frame["doc_id"],
        locator_after=frame["doc_id"],
    )


def _counts(modes: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """mode_counts per (subtask, seed) of ``samples``, with those keys."""
    keys = samples[["subtask", "seed"]].drop_duplicates().reset_index(drop=True)
    return keys.join(mode_counts(modes, keys))


def test_item_modes_and_counts() -> None:
    loaded = []

    def load_item(file: str, locator: int) -> _Item:
        loaded.append((file, locator))
        return _Item([REPLIES.get(locator, "no idea")])

    samples = _samples()
    modes = item_modes(samples, {"a.jsonl": 1000, "b.jsonl": 1000}, load_item).set_index("doc_id")
    assert modes["mode"].to_dict() == {
        0: "wrong",
        1: "invalid",
        2: "cut",
        3: "cut",
        10: "refusal",
        11: "no_answer",
        12: "cut",
        20: "no_answer",
        13: "refusal",
    }
    assert modes.loc[12, "response_chars"] == 5000
    # only the short unanswered items of the changed transitions were read back
    assert sorted(loaded) == [("a.jsonl", 10), ("a.jsonl", 11), ("a.jsonl", 12), ("b.jsonl", 13), ("b.jsonl", 20)]

    assert modes.attrs == {"loaded": 5, "unreadable": 0}
    counts = _counts(modes.reset_index(), samples).iloc[0]
    kinds = ("wrong", "invalid", "no_answer", "cut", "refusal", "unknown")
    assert list(counts.index) == [  # no knowledge split: no item has a label
        "subtask",
        "seed",
        *(f"n_10_{m}" for m in kinds),
        "F_format_share",
        *(f"n_01_{m}" for m in kinds),
        "BT_format_share",
    ]
    assert (counts["n_10_wrong"], counts["n_10_invalid"], counts["n_10_cut"]) == (1, 1, 3)
    assert (counts["n_10_refusal"], counts["n_10_no_answer"], counts["n_10_unknown"]) == (1, 1, 0)
    assert counts["F_format_share"] == pytest.approx(6 / 7)
    assert counts["BT_format_share"] == pytest.approx(1.0)


def test_each_line_is_read_once_and_the_unreadable_stay_no_answer() -> None:
    """Replicates of an item share its logged line: read once. A replicate the line lacks is an empty reply;
    an item that cannot be read back stays no_answer and is counted as unreadable."""
    samples = _samples()
    extra = pd.concat([samples[samples["doc_id"] == 11]] * 2).assign(replicate=[3, 1])  # item 11's replicates
    samples = pd.concat([samples, extra], ignore_index=True)
    loaded = []

    def load_item(file: str, locator: int) -> _Item:
        loaded.append((file, locator))
        if locator == 10:
            raise OSError("gone")
        return _Item([REPLIES.get(locator, "no idea"), REPLIES[10]])

    modes = item_modes(samples, {"a.jsonl": 1000, "b.jsonl": 1000}, load_item)
    assert sorted(loaded) == [("a.jsonl", 10), ("a.jsonl", 11), ("a.jsonl", 12), ("b.jsonl", 13), ("b.jsonl", 20)]
    assert modes.attrs == {"loaded": 6, "unreadable": 1}
    of_11 = modes[modes["doc_id"] == 11]
    assert of_11["mode"].tolist() == ["no_answer", "no_answer", "refusal"]  # replicates 0, 3 (empty), 1
    assert of_11["response_chars"].tolist() == [50.0, 50.0, 50.0]  # logged: kept
    assert modes.set_index("doc_id").loc[10, "mode"] == "no_answer"  # not read: no refusal claimed


def test_unknown_limit_and_no_loader_keep_no_answer() -> None:
    modes = item_modes(_samples(), {}, None).set_index("doc_id")
    assert modes.loc[3, "mode"] == "no_answer"  # max_gen_toks unknown: length tells nothing
    assert modes.loc[10, "mode"] == "no_answer"  # reply not read: no refusal claimed
    assert modes.loc[2, "mode"] == "cut"


def test_ordinary_tasks() -> None:
    """Log-likelihood MC misses are wrong answers; lm-eval's '[invalid]' fallback is no answer; else unknown."""
    samples = pd.DataFrame(
        {
            "subtask": ["mc", "mc", "gen", "gen", "gen"],
            "category": "C",
            "seed": "0",
            "doc_id": [0, 1, 0, 1, 2],
            "transition": ["1->0", "1->1", "1->0", "1->0", "1->1"],
            "status_before": None,
            "status_after": None,
            "answer_before": ["A", "A", "12", "7", "3"],
            "answer_after": ["B", "A", "[invalid]", "8", "3"],
            "option_ll_before": [[-1.0, -2.0], [-1.0, -2.0], None, None, None],
            "option_ll_after": [[-2.0, -1.0], [-1.0, -2.0], None, None, None],
        }
    )
    modes = item_modes(samples, {}, None)
    assert modes["mode"].tolist() == ["wrong", "no_answer", "unknown"]
    counts = _counts(modes, samples).set_index("subtask")
    assert counts.loc["mc", "F_format_share"] == 0.0
    assert counts.loc["gen", "F_format_share"] == 1.0  # the unknown item is left out of the share
    assert counts.loc["gen", "n_10_unknown"] == 1
    assert math.isnan(counts.loc["mc", "BT_format_share"])
    assert answered(samples, "after").tolist() == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert np.isnan(answered(samples, "before")[2:]).all()  # no '[invalid]' on that side: cannot tell


def test_the_knowledge_split_counts_each_key_and_zeros_where_no_item_has_a_label() -> None:
    """Only 1->0 items labelled kept or lost are split; a sub-benchmark listed first, without labels, gets zeros."""
    labelled = _samples().assign(knowledge="")
    labelled.loc[labelled["doc_id"].isin([0, 12]), "knowledge"] = "kept"
    labelled.loc[labelled["doc_id"] == 11, "knowledge"] = "lost"
    labelled.loc[labelled["doc_id"] == 20, "knowledge"] = "there before"  # a 0->1 label: not split
    samples = pd.concat([_samples().assign(subtask="r", knowledge=""), labelled], ignore_index=True)
    keys = pd.DataFrame({"subtask": ["r", "s"], "seed": ["0", "0"]})
    split = mode_counts(item_modes(samples, {}, None), keys).filter(regex="_(kept|lost)$")
    assert split.shape == (2, 12)
    assert split.iloc[0].tolist() == [0] * 12
    kept_and_lost = {c: v for c, v in split.iloc[1].items() if v}
    assert kept_and_lost == {"n_10_wrong_kept": 1, "n_10_no_answer_kept": 1, "n_10_no_answer_lost": 1}


def test_behaviour_adherence_and_lengths() -> None:
    samples = _samples()
    keys = pd.DataFrame({"subtask": ["other", "s"], "seed": ["0", "0"]})  # row 0: no items, all NaN
    both = behaviour(samples, keys)
    assert both.iloc[0].isna().all()
    out = both.iloc[1]
    assert out["answered_before"] == pytest.approx(9 / 11)
    assert out["answered_after"] == pytest.approx(4 / 11)
    assert out["median_chars_before"] == 300.0
    assert out["median_chars_after"] == pytest.approx(np.nanmedian(_samples()["response_chars_after"]))


def test_through_pairing_with_real_lmeval_files(tmp_path) -> None:
    """Postforget samples in lm-eval's layout: statuses from the log, replies read back by the lm-eval source."""
    after_items = [  # (status, answer, reply)
        ("answered", "B", "B looks right.\nAnswer: B"),
        ("invalid", "F", "Answer: F"),
        ("no_answer", None, "I'm sorry, but I can't help with that."),
        ("no_answer", None, LONG_RESPONSE),  # 1080 characters >= 2 x max_gen_toks (100): cut
        ("no_answer", None, "Hmm, tricky."),
        ("unfinished", None, "<think>Let me count the"),
    ]
    task = "postforget_logic_demo"
    before = [sample_line(i, None, record=pf_record("logic_demo", 1)) for i in range(len(after_items))]
    after = [
        sample_line(i, None, response=reply, record=pf_record("logic_demo", 0, answer=answer, status=status))
        for i, (status, answer, reply) in enumerate(after_items)
    ]
    write_run(tmp_path / "before", {task: before})
    write_run(tmp_path / "after", {task: after}, configs={task: {"generation_kwargs": {"max_gen_toks": 100}}})
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.tables["failure_modes"].iloc[0]
    got = {m: int(row[f"n_10_{m}"]) for m in ("wrong", "invalid", "refusal", "cut", "no_answer", "unknown")}
    assert got == {"wrong": 1, "invalid": 1, "refusal": 1, "cut": 2, "no_answer": 1, "unknown": 0}
    assert row["F_format_share"] == pytest.approx(5 / 6)
    assert result.summary["analyses"]["failure_modes"]["items_read_back"] == 2  # the two short no_answer replies
    sub = result.subtasks.iloc[0]
    assert sub["answered_before"] == 1.0 and sub["answered_after"] == pytest.approx(1 / 6)


def _expansions(items: Any) -> set[str]:
    """Every string a refusal phrase matches (the phrases are finite: literals, classes, branches, '?')."""
    out = {""}
    for op, av in items:
        if op is C.LITERAL:
            options = {chr(av)}
        elif op is C.IN:
            assert all(kind is C.LITERAL for kind, _ in av), av
            options = {chr(code) for _, code in av}
        elif op is C.BRANCH:
            options = set().union(*(_expansions(branch) for branch in av[1]))
        elif op is C.SUBPATTERN:
            options = _expansions(av[3])
        elif op is C.MAX_REPEAT and av[:2] == (0, 1):
            options = {""} | _expansions(av[2])
        else:
            raise AssertionError(f"a phrase that is not a finite set of strings: {op}")
        out = {a + b for a in out for b in options}
    return out


def test_every_phrase_holds_a_cue() -> None:
    """is_refusal skips sentences without a cue word: every string any phrase matches must hold one."""
    strings = set().union(*(_expansions(re_parser.parse(p)) for p in PHRASES))
    assert len(strings) > 100
    assert [s for s in strings if not any(cue in s for cue in CUES)] == []
    assert all(is_refusal(f"Well. Honestly {s} do this for you") for s in strings)


@pytest.mark.parametrize(("chars", "mode"), [(2000.0, "cut"), (1999.0, "no_answer"), (2001.0, "cut")])
def test_a_reply_of_exactly_twice_max_gen_toks_characters_is_cut(chars: float, mode: str) -> None:
    """The bound is CUT_CHARS_PER_TOKEN (2) x max_gen_toks (1000) = 2000 characters, reached at 2000 exactly; a reply
    that reaches it is cut by its logged length alone, not read back."""
    samples = _samples()
    samples = samples[samples["doc_id"] == 11].assign(response_chars_after=chars)
    modes = item_modes(samples, {"a.jsonl": 1000}, lambda file, locator: _Item(["no idea"]))
    assert modes["mode"].tolist() == [mode]
    assert modes.attrs == {"loaded": 1 if mode == "no_answer" else 0, "unreadable": 0}


def test_the_answered_share_of_ordinary_generative_tasks_is_judged_per_seed() -> None:
    """lm-eval's '[invalid]' fallback shows that a seed's run used a regex filter: its other answers were extracted
    (answered). A seed whose run never logs the fallback may have logged raw replies: its share stays unknown."""
    samples = pd.DataFrame(
        {
            "subtask": "gsm8k",
            "category": "Math",
            "seed": ["0", "0", "0", "0", "1", "1", "1", "1"],
            "doc_id": [0, 1, 2, 3, 0, 1, 2, 3],
            "status_after": None,
            "answer_after": ["12", "[invalid]", "7", "[invalid]", "12", "7", "3", "The answer is 4"],
            "response_chars_after": 100.0,
        }
    )
    keys = pd.DataFrame({"subtask": ["gsm8k", "gsm8k"], "seed": ["0", "1"]})
    out = behaviour(samples, keys)
    assert out.loc[0, "answered_after"] == 0.5
    assert math.isnan(out.loc[1, "answered_after"])
    assert answered(samples, "after")[:4].tolist() == [1.0, 0.0, 1.0, 0.0]


def test_a_replicate_beyond_the_logged_replies_is_empty_and_replicate_defaults_to_the_first() -> None:
    """Item 12 logs no length and one reply: its replicate 1 reads back as the empty reply (0 characters). Samples
    without a replicate column read each item's first reply: item 11's is 'no idea', not the refusal after it."""
    samples = _samples()
    lacking = samples[samples["doc_id"] == 12].assign(replicate=1)
    modes = item_modes(lacking, {"a.jsonl": 1000}, lambda file, locator: _Item([REPLIES[12]]))
    assert modes[["mode", "response_chars"]].values.tolist() == [["no_answer", 0.0]]
    first = samples[samples["doc_id"] == 11].drop(columns="replicate")
    modes = item_modes(first, {"a.jsonl": 1000}, lambda file, locator: _Item(["no idea", REPLIES[10]]))
    assert modes["mode"].tolist() == ["no_answer"]


def test_an_unlisted_status_is_unknown_the_side_is_the_wrong_one_and_knowledge_is_empty_without_labels() -> None:
    samples = _samples()
    samples.loc[samples["doc_id"] == 0, "status_after"] = "errored"
    modes = item_modes(samples, {}, None).set_index("doc_id")
    assert modes.loc[0, "mode"] == "unknown"
    assert (modes.loc[0, "side"], modes.loc[13, "side"]) == ("after", "before")  # the wrong side of 1->0, 0->1
    assert modes["knowledge"].tolist() == [""] * 9


def test_a_single_option_log_likelihood_item_answers() -> None:
    """One logged option is still a log-likelihood answer: the miss is wrong, the side answered."""
    samples = pd.DataFrame(
        {
            "subtask": "mc",
            "category": "C",
            "seed": "0",
            "doc_id": [0],
            "transition": ["1->0"],
            "status_after": None,
            "answer_after": ["B"],
            "option_ll_after": [[-1.0]],
        }
    )
    assert item_modes(samples, {}, None)["mode"].tolist() == ["wrong"]
    assert answered(samples, "after").tolist() == [1.0]
