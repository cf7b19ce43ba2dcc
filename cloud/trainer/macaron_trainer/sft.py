"""Next-token cross-entropy on the answer tokens (SFT) or every token (pretraining)."""

import torch
import torch.nn.functional as F

from .data import IGNORE, seq_batch


class SequenceObjective:
    """Loss = sum of token losses; the loop divides by the global batch's loss-token count."""

    name = "sft"

    def __init__(self, device):
        self.device = device

    @staticmethod
    def units(examples):
        return sum(e.loss_tokens for e in examples)

    @staticmethod
    def tokens(examples):
        return sum(len(e.ids) - 1 for e in examples)

    def loss_sum(self, module, examples):
        inputs, targets = seq_batch(examples, self.device)
        logits = module(inputs)
        flat = logits.reshape(-1, logits.shape[-1]).float()
        return F.cross_entropy(flat, targets.reshape(-1), ignore_index=IGNORE, reduction="sum")

    def eval_loss_sum(self, model, examples):
        with torch.no_grad():
            return float(self.loss_sum(model, examples))
