"""Sigmoid DPO: -log sigmoid(beta * ((pi_c - ref_c) - (pi_r - ref_r))), with sequence log-probs
summed over completion tokens. The reference is the parent adapter (--from) or the base."""

import torch
import torch.nn.functional as F

from .data import pair_sequences
from .logprobs import Reference, token_logps


def sequence_logps(module, sequences, device):
    """Sum of log p(completion token) for each sequence, shape (N,)."""
    picked, _ = token_logps(module, sequences, device)
    return picked.sum(dim=1)


class DpoObjective:
    """Loss = sum of per-pair DPO losses; the loop divides by the global batch's pair count."""

    name = "dpo"

    def __init__(self, device, beta, model, reference_loras):
        self.device = device
        self.beta = beta
        self.model = model
        self.reference = Reference(model, reference_loras, device)

    @staticmethod
    def units(examples):
        return len(examples)

    @staticmethod
    def tokens(examples):
        return sum(len(e.prompt) * 2 + len(e.chosen) + len(e.rejected) for e in examples)

    def reference_logps(self, sequences):
        return self.reference.token_logps(sequences)[0].sum(dim=1)

    def margins(self, module, examples):
        """(policy margin - reference margin) per pair, and the policy margin alone."""
        n = len(examples)
        sequences = pair_sequences(examples)
        ref = self.reference_logps(sequences)
        pol = sequence_logps(module, sequences, self.device)
        policy_margin = pol[:n] - pol[n:]
        return policy_margin - (ref[:n] - ref[n:]), policy_margin

    def loss_sum(self, module, examples):
        logits, _ = self.margins(module, examples)
        return -F.logsigmoid(self.beta * logits).sum()

    def correct_count(self, model, examples):
        """Pairs whose chosen completion the model (adapter applied) gives the higher log-prob."""
        n = len(examples)
        with torch.no_grad():
            pol = sequence_logps(model, pair_sequences(examples), self.device)
        return float((pol[:n] > pol[n:]).sum())

    def eval_loss_sum(self, model, examples):
        with torch.no_grad():
            return float(self.loss_sum(model, examples))
