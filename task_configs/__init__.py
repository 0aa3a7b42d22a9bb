"""The lm-eval task files of the postforget suite (generated: python -m postforget_lmeval.tasks.generate)."""
