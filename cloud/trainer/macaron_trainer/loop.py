"""The training loop shared by LoRA (SFT/DPO) and full-parameter pretraining.

Step k takes global batch k of a per-epoch shuffle drawn from the seed; each rank computes its
share, the loss is divided by the global batch's unit count (loss tokens, or pairs for DPO) so
the curve does not depend on the number of processes; AdamW, warmup then cosine to 10%,
gradient norm clipped to 1. Nothing random is carried between steps (the shuffle and dropout
seed are functions of seed, epoch, step and rank), so a resumed run equals an uninterrupted one.
"""

import contextlib
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .errors import TrainerError
from .events import emit, log

MIN_LR_RATIO = 0.1
CHECKPOINT_SECONDS = 60.0


@dataclass
class LoopOptions:
    steps: int
    steps_per_epoch: int
    batch_size: int
    micro_batch_size: int
    lr: float
    warmup: int
    seed: int
    max_seconds: float = None
    checkpoint_every: int = None  # steps; None: every CHECKPOINT_SECONDS of training


@dataclass
class LoopResult:
    steps_done: int
    loss_curve: list = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    heldout_before: float = None
    heldout_after: float = None
    # Preference objectives: share of held-out pairs whose chosen side the model prefers.
    accuracy_before: float = None
    accuracy_after: float = None

    @property
    def tokens_per_second(self):
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def lr_factor(step, opts):
    if step < opts.warmup:
        return (step + 1) / opts.warmup
    progress = (step - opts.warmup) / max(1, opts.steps - opts.warmup)
    return MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def batch_for_step(step, n_examples, opts):
    """(indices of global batch `step`, epoch index)."""
    epoch, i = divmod(step, opts.steps_per_epoch)
    order = np.random.default_rng([opts.seed, epoch]).permutation(n_examples)
    return order[i * opts.batch_size : (i + 1) * opts.batch_size].tolist(), epoch


def _chunks(items, size):
    return [items[i : i + size] for i in range(0, len(items), size)]


class Trainer:
    def __init__(self, dist, objective, module, model, params, optimizer, checkpoints, opts):
        self.dist = dist
        self.objective = objective
        self.module = module  # DDP wrapper or the model itself
        self.model = model
        self.params = params
        self.optimizer = optimizer
        self.checkpoints = checkpoints
        self.opts = opts
        self.ddp = module is not model

    def evaluate(self, examples):
        """Mean loss per unit over `examples` (shared across ranks), without dropout."""
        if not examples:
            return None
        mine = examples[self.dist.rank :: self.dist.world]
        self.model.eval()
        total = 0.0
        for chunk in _chunks(mine, self.opts.micro_batch_size):
            total += self.objective.eval_loss_sum(self.model, chunk)
        self.model.train()
        total = self.dist.all_sum([total])[0]
        return total / self.objective.units(examples)

    def accuracy(self, examples):
        """Preference accuracy over `examples` (shared across ranks); None for other objectives."""
        if not examples or not hasattr(self.objective, "correct_count"):
            return None
        mine = examples[self.dist.rank :: self.dist.world]
        self.model.eval()
        correct = 0.0
        for chunk in _chunks(mine, self.opts.micro_batch_size):
            correct += self.objective.correct_count(self.model, chunk)
        self.model.train()
        correct = self.dist.all_sum([correct])[0]
        # GRPO compares completions within groups: its unit is a pair with different rewards.
        units = getattr(self.objective, "accuracy_units", len)(examples)
        return correct / units if units else None

    def _step(self, step, examples):
        idx, epoch = batch_for_step(step, len(examples), self.opts)
        batch = [examples[i] for i in idx]
        units = self.objective.units(batch)
        mine = batch[self.dist.rank :: self.dist.world]
        # A rank without examples still joins DDP's gradient sum, with a zero-weighted example.
        weight = 1.0 if mine else 0.0
        mine = mine or batch[:1]
        torch.manual_seed((self.opts.seed * 1_000_003 + step) * 4099 + self.dist.rank)
        self.optimizer.zero_grad(set_to_none=True)
        self._reset_stats()
        chunks = _chunks(mine, self.opts.micro_batch_size)
        local = 0.0
        for j, chunk in enumerate(chunks):
            sync = self.module.no_sync() if self.ddp and j < len(chunks) - 1 else contextlib.nullcontext()
            with sync:
                loss_sum = self.objective.loss_sum(self.module, chunk) * weight
                # DDP averages gradients over ranks; scaling by world size makes that the global sum.
                (loss_sum * (self.dist.world / units)).backward()
            local += float(loss_sum.detach())
        if not weight:
            self._reset_stats()  # the zero-weighted stand-in example counts for nothing
        return local, units, self.objective.tokens(batch), epoch

    def _reset_stats(self):
        if hasattr(self.objective, "reset_stats"):
            self.objective.reset_stats()

    def _stat_sums(self):
        """The objective's own per-step sums (GRPO: policy and KL terms), if it keeps any."""
        return self.objective.stat_sums() if hasattr(self.objective, "stat_sums") else []

    def run(self, examples, heldout, result, start_step):
        opts = self.opts
        started = time.monotonic()
        last_checkpoint = started
        step_times = []
        if start_step == 0 and heldout:
            result.heldout_before = self.evaluate(heldout)
            result.accuracy_before = self.accuracy(heldout)
            emit("heldout", step=0, loss=result.heldout_before)
        self.model.train()
        for step in range(start_step, opts.steps):
            t0 = time.monotonic()
            local, units, tokens, epoch = self._step(step, examples)
            # --max-seconds counts training time, resumed runs included.
            spent = result.seconds + (time.monotonic() - t0)
            over_time = opts.max_seconds is not None and spent >= opts.max_seconds
            sums = self.dist.all_sum([local, 1.0 if over_time else 0.0, *self._stat_sums()])
            total, stop_votes, stats = sums[0], sums[1], sums[2:]
            loss = total / units
            extra = self.objective.progress_fields(stats, units) if stats else {}
            if not math.isfinite(loss):
                self._fail_nan(step + 1, "loss", loss)
            norm = float(torch.nn.utils.clip_grad_norm_(self.params, 1.0))
            if not math.isfinite(norm):
                self._fail_nan(step + 1, "gradient norm", norm)
            for group in self.optimizer.param_groups:
                group["lr"] = opts.lr * lr_factor(step, opts)
            self.optimizer.step()
            if self.dist.device.type == "cuda":
                torch.cuda.synchronize()
            seconds = time.monotonic() - t0
            step_times.append(seconds)
            result.steps_done = step + 1
            result.tokens += tokens
            result.seconds += seconds
            result.loss_curve.append([step + 1, loss])
            eta = (opts.steps - step - 1) * (sum(step_times) / len(step_times))
            emit(
                "progress",
                step=step + 1,
                steps=opts.steps,
                epoch=epoch + 1,
                loss=loss,
                tokensPerSecond=round(tokens / seconds if seconds > 0 else 0.0, 1),
                etaSeconds=round(eta, 1),
                **extra,
            )
            if stop_votes > 0 and step + 1 < opts.steps:
                log(f"stopping after step {step + 1}: --max-seconds {opts.max_seconds} reached")
                break
            now = time.monotonic()
            due = (
                (step + 1) % opts.checkpoint_every == 0
                if opts.checkpoint_every
                else now - last_checkpoint >= CHECKPOINT_SECONDS
            )
            if due and step + 1 < opts.steps:
                self.save_checkpoint(step + 1, result)
                last_checkpoint = now
        if heldout:
            result.heldout_after = self.evaluate(heldout)
            result.accuracy_after = self.accuracy(heldout)
            emit("heldout", step=result.steps_done, loss=result.heldout_after)
        return result

    def save_checkpoint(self, step, result):
        if not self.dist.is_main:
            return
        trainable = {name: p.detach().cpu() for name, p in self.model.named_parameters() if p.requires_grad}
        path = self.checkpoints.save(
            step,
            {
                "trainable": trainable,
                "optimizer": self.optimizer.state_dict(),
                "rng": torch.get_rng_state(),
                "lossCurve": result.loss_curve,
                "tokens": result.tokens,
                "seconds": result.seconds,
                "heldoutBefore": result.heldout_before,
                "accuracyBefore": result.accuracy_before,
            },
        )
        emit("checkpoint", step=step, path=path)

    def restore(self, state, result):
        """Loads a checkpoint state into the model and optimizer; returns the step to continue at."""
        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for name, value in state["trainable"].items():
                params[name].copy_(value.to(params[name].device))
        self.optimizer.load_state_dict(state["optimizer"])
        result.loss_curve = [list(p) for p in state["lossCurve"]]
        result.tokens = state["tokens"]
        result.seconds = state["seconds"]
        result.heldout_before = state["heldoutBefore"]
        result.accuracy_before = state.get("accuracyBefore")
        result.steps_done = state["step"]
        return state["step"]

    def _fail_nan(self, step, what, value):
        where = self.checkpoints.directory if self.checkpoints._files() else "none written yet"
        raise TrainerError(
            "nan_loss",
            f"the {what} became {value} at step {step}; training stopped, no output written "
            f"(last good checkpoint: {where})",
        )
