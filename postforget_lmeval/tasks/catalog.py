"""The benchmark catalog: the one place that says which sub-benchmarks exist and where they live.

Every task YAML in ``task_configs/`` is generated from this table (``python -m
postforget_lmeval.tasks.generate``), and the per-sample records carry the category and k taken from it, so
pairing needs no second table. Benchmarks, splits and categories: the paper's Appendix B; where we
differ from the paper's released code, ``docs/paper-differences.md`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CATEGORIES: tuple[str, ...] = (
    "Commonsense",
    "Culture",
    "Logic",
    "Knowledge/QA",
    "Language",
    "Liberal Arts",
    "Math",
    "Safety/Truthfulness",
    "Science/Tech",
)

LL_SUFFIX = "_ll"
"""The log-likelihood twin's suffix, on task and group names alike (``postforget_mmlu_abstract_algebra_ll``,
``postforget_mmlu_ll``, ``postforget_all_ll``): the one place that spells it."""


@dataclass(frozen=True)
class Subtask:
    """One sub-benchmark: an lm-eval task (two, with its base-model variant)."""

    benchmark: str
    name: str
    category: str
    dataset_path: str | None
    dataset_name: str | None
    split: str
    # A name of postforget_lmeval.scoring.FORMATS.
    answer_format: str = "letter"
    # MMLU for base models is few-shot without chain-of-thought (paper Appendix B.1).
    base_cot: bool = True
    # Split the base variant's exemplars come from (MMLU: ``dev``); None: ``_exemplars.py``.
    fewshot_split: str | None = None
    dataset_kwargs: dict[str, object] = field(default_factory=dict)
    # Loader function in task_configs/utils.py instead of datasets.load_dataset (the demo set).
    custom_dataset: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    # Demo tasks are not part of the paper's suite or its groups.
    in_suite: bool = True
    # Dataset column holding the text several questions share (MCTest's story, MuSR's narrative): its hash is
    # the record's ``cluster``, and the bootstrap draws such items together.
    cluster_field: str | None = None

    @property
    def subtask(self) -> str:
        """Pairing key's first half, shared by the chat and base variants."""
        return f"{self.benchmark}_{self.name}"

    @property
    def task(self) -> str:
        return f"postforget_{self.subtask}"

    @property
    def base_task(self) -> str:
        return f"{self.task}_base"

    @property
    def has_ll_twin(self) -> bool:
        """A log-likelihood twin scores each option as a continuation, which needs one gold option: a number
        answer (BBH object_counting) or a set of options (SaladBench) has none."""
        return self.answer_format == "letter"

    @property
    def ll_task(self) -> str:
        """The log-likelihood twin's task name (see :attr:`has_ll_twin`)."""
        return f"{self.task}{LL_SUFFIX}"


_MMLU_CATEGORY: dict[str, tuple[str, ...]] = {
    "Logic": ("logical_fallacies",),
    "Knowledge/QA": ("miscellaneous", "global_facts"),
    "Liberal Arts": (
        "world_religions",
        "us_foreign_policy",
        "sociology",
        "security_studies",
        "public_relations",
        "professional_psychology",
        "professional_law",
        "prehistory",
        "philosophy",
        "management",
        "international_law",
        "high_school_world_history",
        "high_school_us_history",
        "high_school_psychology",
        "high_school_microeconomics",
        "high_school_macroeconomics",
        "high_school_government_and_politics",
        "high_school_geography",
        "high_school_european_history",
    ),
    "Math": (
        "high_school_statistics",
        "high_school_mathematics",
        "formal_logic",
        "elementary_mathematics",
        "econometrics",
        "college_mathematics",
        "abstract_algebra",
    ),
    "Safety/Truthfulness": ("moral_scenarios", "moral_disputes", "jurisprudence", "business_ethics"),
    "Science/Tech": (
        "marketing",
        "virology",
        "professional_medicine",
        "professional_accounting",
        "nutrition",
        "medical_genetics",
        "machine_learning",
        "human_sexuality",
        "human_aging",
        "high_school_physics",
        "high_school_computer_science",
        "high_school_chemistry",
        "high_school_biology",
        "electrical_engineering",
        "conceptual_physics",
        "computer_security",
        "college_physics",
        "college_medicine",
        "college_computer_science",
        "college_chemistry",
        "college_biology",
        "clinical_knowledge",
        "astronomy",
        "anatomy",
    ),
}

_BBH_CATEGORY: dict[str, tuple[str, ...]] = {
    "Culture": ("sports_understanding", "movie_recommendation"),
    "Logic": (
        "navigate",
        "causal_judgement",
        "penguins_in_a_table",
        "web_of_lies",
        "tracking_shuffled_objects_three_objects",
        "tracking_shuffled_objects_five_objects",
        "tracking_shuffled_objects_seven_objects",
        "temporal_sequences",
        "reasoning_about_colored_objects",
        "logical_deduction_three_objects",
        "logical_deduction_five_objects",
        "logical_deduction_seven_objects",
        "formal_fallacies",
        "date_understanding",
    ),
    "Knowledge/QA": ("object_counting",),
    "Language": (
        "snarks",
        "disambiguation_qa",
        "ruin_names",
        "hyperbaton",
        "salient_translation_error_detection",
    ),
    "Math": ("geometric_shapes", "boolean_expressions"),
}


def _mmlu() -> list[Subtask]:
    return [
        Subtask("mmlu", subject, category, "cais/mmlu", subject, "test", base_cot=False, fewshot_split="dev")
        for category, subjects in _MMLU_CATEGORY.items()
        for subject in subjects
    ]


def _bbh() -> list[Subtask]:
    return [
        Subtask(
            "bbh",
            name,
            category,
            "SaylorTwift/bbh",
            name,
            "test",
            answer_format="number" if name == "object_counting" else "letter",
        )
        for category, names in _BBH_CATEGORY.items()
        for name in names
    ]


def _others() -> list[Subtask]:
    return [
        # GPQA is gated: it needs an HF token with access granted on the dataset page.
        Subtask("gpqa", "diamond", "Science/Tech", "Idavidrein/gpqa", "gpqa_diamond", "train"),
        *(
            Subtask("musr", name, "Logic", "TAUR-Lab/MuSR", None, name, cluster_field="narrative")
            for name in ("murder_mysteries", "object_placements", "team_allocation")
        ),
        Subtask("arc", "easy", "Logic", "allenai/ai2_arc", "ARC-Easy", "test"),
        Subtask("arc", "challenge", "Logic", "allenai/ai2_arc", "ARC-Challenge", "test"),
        Subtask(
            "truthfulqa",
            "mc1",
            "Safety/Truthfulness",
            "truthfulqa/truthful_qa",
            "multiple_choice",
            "validation",
        ),
        # The test split has no labels: validation it is.
        Subtask("hellaswag", "main", "Language", "Rowan/hellaswag", None, "validation"),
        Subtask("siqa", "main", "Language", "lighteval/siqa", None, "validation"),
        # Not in lm-eval: the Hub's parquet conversion of sagnikrayc/mctest (its own loader is a
        # script, which current `datasets` no longer runs). That branch has no dataset card, so
        # `datasets` sees one `default` config holding mc160 and mc500 alike (a config name such as
        # "mc500" is refused); the MC500 test file is chosen by its path on the branch instead.
        # MC500 test: 150 stories, 600 questions.
        Subtask(
            "mctest",
            "main",
            "Knowledge/QA",
            "sagnikrayc/mctest",
            None,
            "test",
            dataset_kwargs={
                "revision": "refs/convert/parquet",
                "data_files": {"test": "mc500/test/*.parquet"},
            },
            cluster_field="story",
        ),
        Subtask("piqa", "main", "Commonsense", "baber/piqa", None, "validation"),
        Subtask("commonsenseqa", "main", "Commonsense", "tau/commonsense_qa", None, "validation"),
        Subtask(
            "saladbench",
            "mrq",
            "Safety/Truthfulness",
            "OpenSafetyLab/Salad-Data",
            "mcq_set",
            "train",
            answer_format="letters",
        ),
    ]


DEMO = Subtask("demo", "world", "Demo", None, None, "test", custom_dataset="load_demo_world", in_suite=False)
"""``postforget demo``'s facts: real countries' capitals, continents and currencies (``demo/world.py``)."""

SUBTASKS: tuple[Subtask, ...] = (*_mmlu(), *_bbh(), *_others(), DEMO)

BENCHMARKS: tuple[str, ...] = (
    "mmlu",
    "bbh",
    "gpqa",
    "musr",
    "arc",
    "truthfulqa",
    "hellaswag",
    "siqa",
    "mctest",
    "piqa",
    "commonsenseqa",
    "saladbench",
)


def suite() -> list[Subtask]:
    """The paper's sub-benchmarks (the demo set excluded)."""
    return [s for s in SUBTASKS if s.in_suite]


_BY_SUBTASK: dict[str, Subtask] = {s.subtask: s for s in SUBTASKS}


def by_subtask(subtask: str) -> Subtask:
    try:
        return _BY_SUBTASK[subtask]
    except KeyError:
        raise KeyError(f"unknown postforget sub-benchmark {subtask!r}") from None


def category_slug(category: str) -> str:
    """``Knowledge/QA`` -> ``knowledge_qa``, for group names."""
    return category.lower().replace("/", "_").replace(" ", "_")
