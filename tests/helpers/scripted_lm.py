"""A scripted lm-eval model for end-to-end tests: real `lm_eval` runs without weights.

Importing this module registers the model ``postforget-scripted`` with lm-eval. Its answers come
from a script, so a test knows exactly which items a run gets right and can check the pairing's
counts against its own.

Script (JSON file named by model_args ``script=PATH`` or the env var ``POSTFORGET_SCRIPT``)::

    {"generations": [{"contains": "What is 2+2", "response": "...\\nAnswer: B", "seeds": [1]}],
     "default_generation": "Answer: A",
     "choices": [{"contains": "capital of France", "continuation": " Paris"}]}

``generations``: the first rule whose ``contains`` occurs in the prompt (and whose optional
``seeds`` holds the run's ``seed`` model arg) gives the generated text; else ``default_generation``.
``choices``: for log-likelihood requests, the continuation named by the first matching rule scores
-1.0 and every other -5.0 (so it is the argmax); with no matching rule every continuation scores
-5.0, which lm-eval's ``acc`` resolves to the first option.

For anything a static script cannot say, model_args ``fn=module:function`` names a callable
``fn(kind, context, arg, seed)``: kind is ``"generate"`` (arg = gen_kwargs; return the text) or
``"loglikelihood"`` (arg = continuation; return the log-likelihood as a float).

Run it through the real CLI with ``python -c "import tests.helpers.scripted_lm; from lm_eval.__main__ import
cli_evaluate; cli_evaluate()" --model postforget-scripted --model_args script=...,seed=1 ...``
(the repository root on PYTHONPATH), or in-process after ``from tests.helpers import scripted_lm``.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

MODEL_NAME = "postforget-scripted"
WINNING_LL = -1.0
LOSING_LL = -5.0


def _load_callable(spec: str) -> Callable[[str, str, Any, int | None], Any]:
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"fn={spec!r}: expected 'module:function'")
    return getattr(importlib.import_module(module), name)


@register_model(MODEL_NAME)
class ScriptedLM(LM):
    """Answers every request from a script; ``seed`` mimics vLLM's model_args seed."""

    def __init__(
        self, script: str | None = None, fn: str | None = None, seed: int | str | None = None, **_: Any
    ) -> None:
        super().__init__()
        self.seed = None if seed in (None, "", "None") else int(seed)
        self.fn = _load_callable(fn) if fn else None
        path = script or os.environ.get("POSTFORGET_SCRIPT")
        self.script: dict[str, Any] = json.loads(Path(path).read_text()) if path else {}
        if self.fn is None and not self.script:
            raise ValueError(
                "postforget-scripted needs model_args script=PATH or fn=module:function (or POSTFORGET_SCRIPT)"
            )

    def _rule(self, key: str, context: str) -> dict[str, Any] | None:
        for rule in self.script.get(key, []):
            seeds = rule.get("seeds")
            if rule["contains"] in context and (seeds is None or self.seed in seeds):
                return rule
        return None

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in requests:
            context, gen_kwargs = req.args
            if self.fn is not None:
                out.append(str(self.fn("generate", context, gen_kwargs, self.seed)))
                continue
            rule = self._rule("generations", context)
            out.append(rule["response"] if rule else self.script.get("default_generation", ""))
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for req in requests:
            context, continuation = req.args
            if self.fn is not None:
                ll = float(self.fn("loglikelihood", context, continuation, self.seed))
            else:
                rule = self._rule("choices", context)
                ll = WINNING_LL if rule and rule["continuation"] == continuation else LOSING_LL
            out.append((ll, ll == WINNING_LL))
        return out

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        return [LOSING_LL for _ in requests]

    @property
    def tokenizer_name(self) -> str:
        return MODEL_NAME

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """Plain role-tagged text, so chat-template runs work without a tokenizer."""
        text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in chat_history)
        return text + ("<|assistant|>\n" if add_generation_prompt else "")
