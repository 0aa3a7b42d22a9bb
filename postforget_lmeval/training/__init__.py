"""Forgetting while a model trains: :class:`ForgettingCallback` for ``transformers.Trainer`` (and TRL's trainers),
:class:`Probes` for any other training loop."""

from postforget_lmeval.training.callback import ForgettingCallback
from postforget_lmeval.training.probes import Probes

__all__ = ["ForgettingCallback", "Probes"]
