"""A tiny random-init causal LM and tokenizer, built offline, that lm-eval's hf backend can load."""

from __future__ import annotations

from pathlib import Path


def build_tiny_model(directory: Path, seed: int = 0) -> Path:
    """Byte-level BPE trained on a few sentences plus a 1-layer GPT-2; saved with save_pretrained."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = ["Answer the following multiple choice question. Question: Answer: A B C D Reasoning:"] * 4
    tokenizer.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(fast),
        n_positions=4096,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=fast.eos_token_id,
        eos_token_id=fast.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory
