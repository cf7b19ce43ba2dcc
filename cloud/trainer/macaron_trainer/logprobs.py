"""Per-token log-probabilities of completions, under the policy or under a frozen reference.

The reference of DPO and GRPO is the base with the parent adapter (--from) as it was at the
start of the run, or the base alone: its LoRA deltas are swapped into the model's layers for a
no-grad, no-dropout forward pass and swapped back.
"""

import contextlib

import torch
import torch.nn.functional as F

from .data import IGNORE, seq_batch


def token_logps(module, sequences, device):
    """(log p of each completion token, 0 elsewhere; the mask of completion tokens), both (N, T)."""
    inputs, targets = seq_batch(sequences, device)
    logits = module(inputs).float()
    mask = targets != IGNORE
    picked = torch.gather(F.log_softmax(logits, dim=-1), 2, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return picked * mask, mask


class Reference:
    """The frozen reference policy: `reference_loras` maps a base weight name to its frozen
    LoraDelta (a layer missing from it runs as the base)."""

    def __init__(self, model, reference_loras, device):
        self.model = model  # the raw model (not the DDP wrapper): reference passes need no hooks
        self.reference_loras = reference_loras
        self.device = device

    @contextlib.contextmanager
    def active(self):
        layers = self.model.linear_layers()
        current = {name: layer.lora for name, layer in layers.items()}
        try:
            for name, layer in layers.items():
                layer.lora = self.reference_loras.get(name)
            yield
        finally:
            for name, layer in layers.items():
                layer.lora = current[name]

    def token_logps(self, sequences):
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad(), self.active():
                return token_logps(self.model, sequences, self.device)
        finally:
            self.model.train(was_training)
