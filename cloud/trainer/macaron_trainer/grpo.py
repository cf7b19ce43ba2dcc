"""GRPO-style policy gradient with group-relative advantages, on fixed sampled groups.

Each example is a prompt with K completions sampled from the live adapter and their rewards
(data.py GroupExample). A completion's advantage is its group-relative reward
A_i = (r_i - mean) / (std + eps); a group whose rewards are all equal has no signal (the session
leaves it out and says so). A group with a stated ``baseline`` (users' trajectories without a
contrast in their group, possibly one alone) has A_i = r_i - baseline instead (data.py). Per completion token t, with rho_t = pi(y_t|.) / pi_old(y_t|.):

    loss_t = -min(rho_t * A_i, clip(rho_t, 1 - clip, 1 + clip) * A_i) + beta * KL_t
    KL_t   = exp(ref_t - pol_t) - (ref_t - pol_t) - 1        (the k3 estimator, >= 0)

summed over the completion tokens of the batch and divided by their count (the loop's global
normalisation). The samples came from the live adapter, which is also the reference (the base
with the parent adapter, as for DPO), so pi_old = pi_ref: at the start every ratio is 1 and the
gradient is exactly -A_i * grad log pi(y_t|.); later steps over the same groups (several epochs)
are kept near the sampler by the clipped ratio. The sampler's temperature and min-p are not
corrected for (pi_old is the model's own distribution at temperature 1).
"""

import torch

from .data import group_sequences
from .logprobs import Reference, token_logps


class GrpoObjective:
    """Loss = sum of per-token GRPO losses; the loop divides by the global batch's completion tokens."""

    name = "grpo"

    def __init__(self, device, beta, clip, model, reference_loras):
        self.device = device
        self.beta = beta
        self.clip = clip
        self.reference = Reference(model, reference_loras, device)
        self.reset_stats()

    @staticmethod
    def units(examples):
        return sum(e.loss_tokens for e in examples)

    @staticmethod
    def tokens(examples):
        return sum(len(e.prompt) * len(e.completions) + e.loss_tokens for e in examples)

    def _terms(self, module, examples):
        """Summed policy-gradient and KL terms over the completion tokens of `examples`."""
        sequences = group_sequences(examples)
        ref, _ = self.reference.token_logps(sequences)
        pol, mask = token_logps(module, sequences, self.device)
        advantages = [a for e in examples for a in e.advantages]
        adv = torch.tensor(advantages, dtype=pol.dtype, device=pol.device).unsqueeze(1)
        log_ratio = pol - ref  # 0 outside the completions (both are masked there)
        ratio = torch.exp(log_ratio)
        clipped = torch.clamp(ratio, 1.0 - self.clip, 1.0 + self.clip)
        policy = -torch.minimum(ratio * adv, clipped * adv)
        kl = torch.exp(-log_ratio) + log_ratio - 1.0
        weight = mask.to(pol.dtype)
        return (policy * weight).sum(), (kl * weight).sum()

    def loss_sum(self, module, examples):
        policy, kl = self._terms(module, examples)
        self._policy += float(policy.detach())
        self._kl += float(kl.detach())
        return policy + self.beta * kl

    # --- what the progress events add (summed over the ranks by the loop) ----------------------
    def reset_stats(self):
        self._policy = 0.0
        self._kl = 0.0

    def stat_sums(self):
        return [self._policy, self._kl]

    @staticmethod
    def progress_fields(sums, units):
        policy, kl = sums
        return {"policyLoss": policy / units, "kl": kl / units}

    # --- held-out ------------------------------------------------------------------------------
    def eval_loss_sum(self, model, examples):
        with torch.no_grad():
            policy, kl = self._terms(model, examples)
            return float(policy + self.beta * kl)

    @staticmethod
    def accuracy_units(examples):
        """Pairs of completions of one group with different rewards."""
        return sum(_ordered_pairs(e.rewards) for e in examples)

    def correct_count(self, model, examples):
        """Pairs (higher reward, lower reward) of a group where the higher-reward completion has the
        higher mean log-prob per token under the model (adapter applied)."""
        with torch.no_grad():
            pol, mask = token_logps(model, group_sequences(examples), self.device)
        mean = (pol.sum(dim=1) / mask.sum(dim=1)).tolist()
        correct, row = 0, 0
        for e in examples:
            k = len(e.completions)
            lp = mean[row : row + k]
            row += k
            correct += sum(
                1 for i in range(k) for j in range(k) if e.rewards[i] > e.rewards[j] and lp[i] > lp[j]
            )
        return float(correct)


def _ordered_pairs(rewards):
    return sum(1 for a in rewards for b in rewards if a > b)
