"""Command-line parsing for `python -m macaron_trainer train|pretrain|logits`.

Argument errors become {"event":"error","code":"bad_args"} and exit code 2 instead of
argparse's usage text, so callers always get a machine-readable answer.
"""

import argparse

from .errors import TrainerError
from .lora import ALL_TARGETS, DEFAULT_TARGETS


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise TrainerError("bad_args", message)


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _seed(text):
    value = int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{text} is not in 0..2^32-1")
    return value


def _targets(text):
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in names if t not in ALL_TARGETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown target(s) {','.join(unknown) or '(none)'}; choose from {','.join(ALL_TARGETS)}"
        )
    return names


def _common(p, lr, batch_size):
    p.add_argument("--base", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--lr", type=float, default=lr)
    length = p.add_mutually_exclusive_group()
    length.add_argument("--epochs", type=_positive_int)
    length.add_argument("--steps", type=_positive_int)
    p.add_argument("--batch-size", type=_positive_int, default=batch_size)
    p.add_argument(
        "--micro-batch-size",
        type=_positive_int,
        default=None,
        help="examples per forward pass on each process (gradient accumulation); default: all of them",
    )
    p.add_argument("--seed", type=_seed, default=0)
    p.add_argument("--checkpoint-dir")
    p.add_argument("--checkpoint-every", type=_positive_int, default=None)
    p.add_argument("--threads", type=_positive_int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda", "mps", "auto"), default="cpu")
    p.add_argument("--max-seconds", type=float, default=None)
    p.add_argument(
        "--warmup", type=int, default=None, help="warmup steps (default: 5%% of the steps, at most 20)"
    )
    p.add_argument("--heldout")


def build_parser():
    parser = _Parser(prog="macaron_trainer")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    train = sub.add_parser("train", help="LoRA training (SFT, DPO or GRPO) on a frozen base")
    _common(train, lr=2e-3, batch_size=8)
    train.add_argument("--method", choices=("sft", "dpo", "grpo"), default="sft")
    train.add_argument("--from", dest="parent")
    train.add_argument("--rank", type=_positive_int, default=8)
    train.add_argument("--alpha", type=float, default=16.0)
    train.add_argument("--dropout", type=float, default=0.0)
    # DPO's temperature; GRPO's KL weight.
    train.add_argument("--beta", type=float, default=0.1)
    # GRPO: the importance ratio is clipped to [1 - clip, 1 + clip].
    train.add_argument("--clip", type=float, default=0.2)
    train.add_argument("--targets", type=_targets, default=list(DEFAULT_TARGETS))
    # The same adapter also as a Hugging Face PEFT folder (adapter_config.json + safetensors).
    train.add_argument("--peft-out")

    pretrain = sub.add_parser("pretrain", help="full-parameter training of a base model")
    _common(pretrain, lr=3e-3, batch_size=16)
    pretrain.add_argument("--name")

    logits = sub.add_parser("logits", help="raw next-token logits at every position")
    logits.add_argument("--base", required=True)
    logits.add_argument("--adapter")
    logits.add_argument("--scale", type=float, default=1.0)
    # Repeatable: one logits event per --tokens, in order (one process for several sequences).
    logits.add_argument("--tokens", required=True, action="append")
    logits.add_argument("--threads", type=_positive_int, default=1)
    # Round quantized matmuls' inputs as llama.cpp's CPU backend does (the parity check).
    logits.add_argument("--llama-cpu-rounding", action="store_true")
    return parser


def parse_args(argv):
    args = build_parser().parse_args(argv)
    if getattr(args, "dropout", 0.0) < 0 or getattr(args, "dropout", 0.0) >= 1:
        raise TrainerError("bad_args", "--dropout must be in [0, 1)")
    if not 0 < getattr(args, "clip", 0.2) < 1:
        raise TrainerError("bad_args", "--clip must be in (0, 1)")
    if getattr(args, "beta", 0.0) < 0:
        raise TrainerError("bad_args", "--beta must not be negative")
    if getattr(args, "lr", 1.0) <= 0:
        raise TrainerError("bad_args", "--lr must be positive")
    return args
