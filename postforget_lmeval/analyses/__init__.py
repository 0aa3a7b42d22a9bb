"""Analyses beyond the paper, added to a :class:`PairResult` once its items are paired.

Three questions a reader asks of a forgetting figure, each answered by its own module:

* why was it forgotten: the failure mode of the wrong side, the share of forgetting that is format
  rather than knowledge, answer-format adherence and reply length (``_failure_modes``);
* is it more than noise: exact McNemar tests (their cluster sign-flip form where items share a text) with
  Benjamini-Hochberg q-values (``_significance``), one stratified test over every sub-benchmark (``_overall``) and
  percentile bootstrap intervals of F_true / BT_true (``_bootstrap``);
* was it coming: the drift of the gold option's probability in log-likelihood multiple-choice runs
  (``_drift``);
* did one recipe forget less than another: two pairs with one before, compared item by item (``_compare``);
* how many items and seeds does a study need: the pilot's half-widths, scaled, or a before-run's under an
  assumed forgetting rate (``_plan``);
* knowledge or format: whether the log-likelihood twin of a flipped item still ranks the gold option first
  (``_knowledge``);
* can the after-run read fewer items: a stratified subset and its design-weighted figures (``_design``).

:func:`annotate` runs them all in order; :func:`terminal_columns` picks what the terminal's category
table shows of them.
"""

from postforget_lmeval.analyses._annotate import ABOVE_MAX, ABOVE_MAX_NOTE, TERMINAL_COLUMNS, annotate, terminal_columns
from postforget_lmeval.analyses._compare import compare as compare_pairs
from postforget_lmeval.analyses._design import ALLOCATIONS as SUBSET_ALLOCATIONS
from postforget_lmeval.analyses._design import INCLUSION_COLUMNS, MIN_PER_STRATUM, drawn_items, samples_json, weigh
from postforget_lmeval.analyses._design import RATES as DESIGN_RATES
from postforget_lmeval.analyses._design import as_categories as design_categories
from postforget_lmeval.analyses._design import draw as draw_subset
from postforget_lmeval.analyses._design import strata as item_strata
from postforget_lmeval.analyses._overall import overall_test
from postforget_lmeval.analyses._plan import SEEDS as PLAN_SEEDS
from postforget_lmeval.analyses._plan import plan as plan_study
from postforget_lmeval.analyses._plan import plan_before as plan_from_before
from postforget_lmeval.analyses._significance import CLUSTER, MCNEMAR

__all__ = [
    "ABOVE_MAX",
    "ABOVE_MAX_NOTE",
    "CLUSTER",
    "DESIGN_RATES",
    "INCLUSION_COLUMNS",
    "MCNEMAR",
    "MIN_PER_STRATUM",
    "PLAN_SEEDS",
    "SUBSET_ALLOCATIONS",
    "TERMINAL_COLUMNS",
    "annotate",
    "compare_pairs",
    "design_categories",
    "draw_subset",
    "drawn_items",
    "item_strata",
    "overall_test",
    "plan_from_before",
    "plan_study",
    "samples_json",
    "terminal_columns",
    "weigh",
]
