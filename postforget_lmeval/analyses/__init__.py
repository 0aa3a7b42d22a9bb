"""Analyses beyond the paper, added to a :class:`PairResult` once its items are paired.

Three questions a reader asks of a forgetting figure, each answered by its own module:

* why was it forgotten: the failure mode of the wrong side, the share of forgetting that is format
  rather than knowledge, answer-format adherence and reply length (``_failure_modes``);
* is it more than noise: exact McNemar tests with Benjamini-Hochberg q-values (``_significance``) and
  percentile bootstrap intervals of F_true / BT_true (``_bootstrap``);
* was it coming: the drift of the gold option's probability in log-likelihood multiple-choice runs
  (``_drift``);
* knowledge or format: whether the log-likelihood twin of a flipped item still ranks the gold option first
  (``_knowledge``).

:func:`annotate` runs them all in order; :func:`terminal_columns` picks what the terminal's category
table shows of them.
"""

from postforget_lmeval.analyses._annotate import TERMINAL_COLUMNS, annotate, terminal_columns

__all__ = ["TERMINAL_COLUMNS", "annotate", "terminal_columns"]
