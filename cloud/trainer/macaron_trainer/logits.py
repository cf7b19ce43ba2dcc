"""`logits`: the raw next-token logits at every position (the parity test against llama.cpp)."""

import torch

from .errors import TrainerError
from .events import emit
from .lora import load_adapter
from .model import load_base
from .quants import set_llama_cpu_rounding


def run_logits(args):
    torch.set_num_threads(args.threads)
    sequences = [_parse_tokens(text) for text in args.tokens]
    _, cfg, model = load_base(args.base)
    for tokens in sequences:
        bad = [t for t in tokens if t < 0 or t >= cfg.vocab]
        if bad:
            raise TrainerError("bad_args", f"token {bad[0]} is outside the vocabulary (size {cfg.vocab})")
    if args.adapter:
        load_adapter(model, args.adapter, scale=args.scale, arch=cfg.arch)
    model.eval()
    set_llama_cpu_rounding(getattr(args, "llama_cpu_rounding", False))
    for tokens in sequences:
        with torch.no_grad():
            logits = model(torch.tensor([tokens], dtype=torch.long))[0]
        emit("logits", logits=logits.tolist())


def _parse_tokens(text):
    try:
        tokens = [int(t) for t in text.split(",") if t.strip()]
    except ValueError as err:
        raise TrainerError("bad_args", f"--tokens must be comma-separated integers: {err}") from err
    if not tokens:
        raise TrainerError("bad_args", "--tokens is empty")
    return tokens
