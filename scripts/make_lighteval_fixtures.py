"""Write LightEval output directories for the LightEval source's tests, with LightEval's own writer.

LightEval is not a dependency of this package, so the fixtures under ``tests/fixtures/lighteval/`` are
generated once per LightEval version and committed. The script builds a real ``LightevalTask`` per task
(paper shape: suite ``community``, ``<name>_reasoning_letter:<subset>``, letters as the Doc's choices,
LightEval's ``multilingual_extractive_match_metric`` with native letters), scores scripted responses with
that metric, logs them through the tracker's loggers as LightEval's ``Pipeline`` does, and calls
``EvaluationTracker.save()``. No model and no network: the docs and responses are synthetic, and the docs
run in LightEval's order (shuffled with ``random.Random(42)``).

The "before" side is a base model with few-shot prompts (exemplars inside the query, no chat
template), the "after" side its instruct model with the zero-shot chat prompt, as in the paper; so the
query of one item differs between the sides and only the item itself (question, options, gold) is shared.

Re-run (from the repository root; each in its own throwaway venv outside the repo)::

    python3 -m venv /tmp/le010 && /tmp/le010/bin/pip install torch==2.13.0 && \
        /tmp/le010/bin/pip install lighteval==0.10.0 pyarrow==20.0.0 'numpy<2' 'xxhash<4'
    /tmp/le010/bin/python scripts/make_lighteval_fixtures.py tests/fixtures/lighteval/v0_10

    python3 -m venv /tmp/le013 && /tmp/le013/bin/pip install torch==2.13.0 && \
        /tmp/le013/bin/pip install lighteval==0.13.0 'xxhash<4' 'huggingface_hub<1.0'
    /tmp/le013/bin/python scripts/make_lighteval_fixtures.py tests/fixtures/lighteval/v0_13

0.10 is written as the paper's pipeline ran it (one LightEval run per task and seed); 0.13 as one run
per seed holding all tasks. Seeds 0 and 1 on each side. The target directory is replaced.
"""

from __future__ import annotations

import random
import shutil
import sys
import time
import types
from importlib.metadata import version
from pathlib import Path

LE_VERSION = version("lighteval")
V010 = LE_VERSION.startswith("0.10")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MODELS = {"before": "Qwen/Qwen2.5-7B", "after": "Qwen/Qwen2.5-7B-Instruct"}
SEEDS = (0, 1)

if not V010:
    # 0.13's task registry imports every built-in task; tiny_benchmarks downloads a file at import.
    sys.modules["lighteval.tasks.tasks.tiny_benchmarks"] = types.ModuleType("tiny_benchmarks")

from lighteval.logging.evaluation_tracker import EvaluationTracker  # noqa: E402 - after the tiny_benchmarks stub above
from lighteval.tasks.lighteval_task import LightevalTask, LightevalTaskConfig  # noqa: E402 - after the tiny_benchmarks stub above
from lighteval.tasks.requests import Doc  # noqa: E402 - after the tiny_benchmarks stub above
from lighteval.utils.language import Language  # noqa: E402 - after the tiny_benchmarks stub above

# (namespace, subset, instruction, items): item = (question, options, gold index)
TASKS: list[tuple[str, str, str, list[tuple[str, list[str], int]]]] = [
    (
        "mmlu_reasoning",
        "abstract_algebra",
        "The following are multiple choice questions (with answers) about abstract algebra.",
        [
            ("Find the order of the element 2 in Z_5 under addition.", ["1", "2", "5", "10"], 2),
            ("How many elements does the symmetric group S_3 have?", ["3", "6", "9", "12"], 1),
            ("Is every cyclic group abelian?", ["Yes", "No", "Only if finite", "Only if infinite"], 0),
            ("What is the identity of (Z, +)?", ["1", "-1", "0", "There is none"], 2),
            ("How many generators does Z_8 have?", ["2", "4", "6", "8"], 1),
            ("The kernel of a homomorphism is always a:", ["coset", "normal subgroup", "field", "ring"], 1),
        ],
    ),
    (
        "arc_reasoning_custom_prompt",
        "easy",
        "",
        [
            ("Which is a liquid at room temperature?", ["iron", "water", "salt"], 1),
            ("What do plants need to make food?", ["sunlight", "sand", "noise", "darkness"], 0),
            ("Which planet is closest to the Sun?", ["Venus", "Earth", "Mars", "Mercury", "Jupiter"], 3),
            ("Which tool measures temperature?", ["ruler", "scale", "thermometer", "clock"], 2),
            ("What gas do animals breathe out?", ["oxygen", "carbon dioxide", "helium"], 1),
        ],
    ),
    (
        "synth_reasoning",
        "capitals",
        "Answer questions about invented countries.",
        [
            ("What is the capital of Broutregoth?", ["Vell", "Sarn", "Ilo"], 0),
            ("What is the capital of Maxtrandia?", ["Pell", "Quorn", "Ust"], 2),
            ("What is the capital of Oskelan?", ["Dirn", "Ferro", "Gath"], 1),
            ("What is the capital of Tyrvale?", ["Hoss", "Kell", "Marn"], 0),
        ],
    ),
]

# Per (side, seed): the response pattern for each item, by position in the task's item list.
# "right"/"wrong" end with a clean "Answer: X"; the others exercise LightEval's extraction rules
# ("Answer: X\nDone." scores the D of "Done"; no answer at all scores 0 unless a capital letter slips in).
PATTERNS = {
    ("before", 0): ["right", "wrong", "right", "done", "right", "none"],
    ("before", 1): ["right", "right", "right", "wrong", "right", "none"],
    ("after", 0): ["right", "right", "wrong", "right", "wrong", "right"],
    ("after", 1): ["right", "right", "right", "right", "done", "right"],
}
REASONING = "Let me think step by step about each option before I commit to one. "


def response(pattern: str, options: list[str], gold: int, rng: random.Random) -> str:
    wrong = (gold + 1) % len(options)
    body = REASONING * rng.randint(1, 4)
    if pattern == "right":
        return f"{body}\nAnswer: {LETTERS[gold]}"
    if pattern == "wrong":
        return f"{body}\nAnswer: {LETTERS[wrong]}"
    if pattern == "done":
        return f"{body}\nAnswer: {LETTERS[gold]}\nDone."
    return "i am not sure. " * 3


def options_block(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))


def chat_query(instruction: str, question: str, options: list[str]) -> str:
    """The paper's zero-shot CoT query (instruct models; the chat template wraps it)."""
    head = (
        f'\n    {instruction}\n    On the very last line, write exactly "Answer: $LETTER" (e.g. "Answer: B"),'
        " with no extra punctuation, no lowercase, no *, and no trailing spaces.\n"
        f'    Think step by step, showing your reasoning.\n    Question: "{question}"\n    '
    )
    return (head + "\n" + options_block(options)).strip()


def base_query(instruction: str, question: str, options: list[str], shots: list[tuple[str, list[str], int]]) -> str:
    """The paper's few-shot query (base models): exemplars in the query, no quotes, ends at Reasoning:."""
    exemplars = [
        f"Question: {q}\n{options_block(o)}\nReasoning: {REASONING.strip()}\nAnswer: {LETTERS[g]}" for q, o, g in shots
    ]
    prefix = f"{instruction}\n\n" if instruction else ""
    return prefix + "\n\n".join(exemplars) + f"\n\nQuestion: {question}\n{options_block(options)}\nReasoning:"


def chat_template(query: str) -> str:
    return f"<|im_start|>user\n{query}<|im_end|>\n<|im_start|>assistant\n"


def metric():
    """The paper's metric: extractive match on native letters (0.13 builds it from its parts, same defaults)."""
    if V010:
        from lighteval.metrics.dynamic_metrics import IndicesExtractionConfig, multilingual_extractive_match_metric

        target = [IndicesExtractionConfig(prefix_for_extraction="NativeLetters")]
        return multilingual_extractive_match_metric(
            language=Language.ENGLISH, gold_extraction_target=target, pred_extraction_target=target, precision=5
        )
    import numpy as np
    from lighteval.metrics.dynamic_metrics import MultilingualExtractiveMatchMetric
    from lighteval.metrics.utils.extractive_match_utils import IndicesExtractionConfig
    from lighteval.metrics.utils.metric_utils import SampleLevelMetric
    from lighteval.tasks.requests import SamplingMethod

    target = [IndicesExtractionConfig(prefix_for_extraction="NativeLetters")]
    return SampleLevelMetric(
        metric_name="extractive_match",
        sample_level_fn=MultilingualExtractiveMatchMetric(
            language=Language.ENGLISH, gold_extraction_target=target, pred_extraction_target=target, precision=5
        ),
        category=SamplingMethod.GENERATIVE,
        corpus_level_fn=np.mean,
        higher_is_better=True,
    )


def make_task(namespace: str, subset: str) -> LightevalTask:
    name = f"{namespace}_letter:{subset}"
    common = dict(
        # No dataset is loaded: the docs are built here, so the prompt function is never called.
        name=name,
        prompt_function=lambda line, task_name=None: None,
        hf_repo="local/synthetic",
        hf_subset=subset,
        evaluation_splits=["test"],
        hf_avail_splits=["test"],
        generation_size=32768,
        stop_sequence=["<|im_start|>", "Question: ", "You are a helpful assistant"],
    )
    if V010:
        cfg = LightevalTaskConfig(suite=["community"], metric=[metric()], **common)
        return LightevalTask(name=f"community|{name}", cfg=cfg)
    cfg = LightevalTaskConfig(metrics=[metric()], **common)
    return LightevalTask(cfg)


def docs_for(task_name: str, side: str, instruction: str, items, shots) -> tuple[list[Doc], list[int]]:
    docs = []
    for i, (question, options, gold) in enumerate(items):
        if side == "before":
            query = base_query(instruction, question, options, shots)
        else:
            query = chat_query(instruction, question, options)
        letters = list(LETTERS[: len(options)])
        kwargs = dict(task_name=task_name, query=query, choices=letters, gold_index=gold, instruction=query)
        doc = Doc(**kwargs) if V010 else Doc(id=str(i), **kwargs)
        if V010:
            doc.ctx = query if side == "before" else chat_template(query)
            doc.num_asked_few_shots = doc.num_effective_few_shots = 0
        docs.append(doc)
    order = list(range(len(docs)))
    random.Random(42).shuffle(order)  # LightEval runs its eval docs in this order
    return [docs[j] for j in order], order


def run(out: Path, side: str, seed: int, task_specs) -> None:
    """One LightEval run (one results file) holding the given tasks."""
    tracker = EvaluationTracker(output_dir=str(out / side), save_details=True)
    gen = dict(seed=seed, temperature=0.6, top_p=0.95, max_new_tokens=32768)
    if V010:
        from lighteval.models.abstract_model import ModelInfo
        from lighteval.models.model_input import GenerationParameters
        from lighteval.models.model_output import GenerativeResponse

        tracker.general_config_logger.log_model_info(
            GenerationParameters(**gen).model_dump(), ModelInfo(model_name=MODELS[side])
        )
    else:
        from lighteval.models.model_input import GenerationParameters
        from lighteval.models.model_output import ModelResponse
        from lighteval.models.vllm.vllm_model import VLLMModelConfig

        tracker.general_config_logger.log_model_info(
            VLLMModelConfig(model_name=MODELS[side], generation_parameters=GenerationParameters(**gen))
        )
    task_dict = {}  # keyed as LightEval's Pipeline keys it: 0.10 suite|task, 0.13 task|fewshot
    for namespace, subset, _instruction, _items in task_specs:
        task = make_task(namespace, subset)
        task_dict[task.name if V010 else task.full_name] = task
    tracker.task_config_logger.log(task_dict)
    for (_namespace, _subset, instruction, items), (key, task) in zip(task_specs, task_dict.items()):
        logged_name = f"{key}|0" if V010 else key
        tracker.versions_logger.log(logged_name, 0)
        shots = TASKS[0][3][:2] if side == "before" else []  # every task's exemplars: the first two MMLU items
        docs, order = docs_for(logged_name, side, instruction, items, shots)
        rng = random.Random(f"{side}{seed}{key}")
        m = task.metrics[0]
        for doc, j in zip(docs, order):
            question, options, gold = items[j]
            pattern = PATTERNS[(side, seed)][j % len(PATTERNS[(side, seed)])]
            text = response(pattern, options, gold, rng)
            if V010:
                resp = GenerativeResponse(result=[text], input_tokens=[1, 2, 3], generated_tokens=[[4, 5]])
                scores = m.compute(golds=doc.get_golds(), predictions=[text], formatted_doc=doc)
                tracker.metrics_logger.log(logged_name, scores)
                tracker.details_logger.log(logged_name, task, doc, [resp], scores)
            else:
                prompt = doc.query if side == "before" else chat_template(doc.query)
                resp = ModelResponse(input=prompt, text=[text], input_tokens=[1, 2, 3], output_tokens=[[4, 5]])
                resp.text_post_processed = [text]
                scores = m.compute_sample(model_response=resp, doc=doc)
                tracker.metrics_logger.log(logged_name, scores)
                tracker.details_logger.log(logged_name, doc, resp, scores)
    tracker.general_config_logger.log_args_info(num_fewshot_seeds=1, max_samples=None, job_id="0")
    tracker.general_config_logger.log_end_time()
    tracker.metrics_logger.aggregate(task_dict=task_dict, bootstrap_iters=10)
    tracker.details_logger.aggregate()
    tracker.save()
    time.sleep(0.01)  # distinct <date> per run


def main(target: str) -> None:
    out = Path(target)
    shutil.rmtree(out, ignore_errors=True)
    for side in ("before", "after"):
        for seed in SEEDS:
            if V010:
                for spec in TASKS:
                    run(out, side, seed, [spec])
            else:
                run(out, side, seed, TASKS)
    print(f"lighteval {LE_VERSION}: wrote {sum(1 for p in out.rglob('*') if p.is_file())} files under {out}")


if __name__ == "__main__":
    main(sys.argv[1])
