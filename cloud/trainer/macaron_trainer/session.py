"""What `train` and `pretrain` share: distributed setup, data, step counts, checkpoints and
resume, the loop, the report and the final events."""

import json
import math
import os
import time

import torch

from . import __version__
from .checkpoint import Checkpoints, config_hash
from .data import load_dataset
from .distributed import init_distributed
from .events import emit, log
from .loop import LoopOptions, LoopResult, Trainer
from .storage import atomic_write, sha256_file

DEFAULT_EPOCHS = 3


def default_warmup(steps):
    return min(20, max(1, round(0.05 * steps)))


class Session:
    """One training run. Subclasses build the model/objective and write the output file."""

    method = "sft"
    kinds = ("sft", "lm")

    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        torch.set_num_threads(args.threads)
        self.dist = init_distributed(args.device)

    # --- hooks --------------------------------------------------------------------------------
    def setup_model(self):
        """Loads the base, returns (model, trainable params, objective)."""
        raise NotImplementedError

    def write_output(self, result):
        raise NotImplementedError

    def hyperparameters(self):
        raise NotImplementedError

    def extra_config(self):
        return {}

    def report_extra(self):
        return {}

    def start_extra(self):
        """Fields the start event adds (GRPO: groups, and those without signal)."""
        return {}

    # --- the run ------------------------------------------------------------------------------
    def run(self):
        try:
            self._run()
        finally:
            self.dist.close()

    def _load_data(self, vocab, context):
        args = self.args
        self.data = load_dataset(args.data, self.kinds, vocab, context)
        self.heldout = None
        if args.heldout:
            self.heldout = load_dataset(args.heldout, self.kinds, vocab, context, "held-out data")

    def _options(self):
        args = self.args
        n = len(self.data.examples)
        steps_per_epoch = math.ceil(n / args.batch_size)
        steps = args.steps or (args.epochs or DEFAULT_EPOCHS) * steps_per_epoch
        self.epochs = args.epochs if args.steps is None else round(steps / steps_per_epoch, 4)
        if args.epochs is None and args.steps is None:
            self.epochs = DEFAULT_EPOCHS
        warmup = args.warmup if args.warmup is not None else default_warmup(steps)
        return LoopOptions(
            steps=steps,
            steps_per_epoch=steps_per_epoch,
            batch_size=args.batch_size,
            micro_batch_size=args.micro_batch_size or args.batch_size,
            lr=args.lr,
            warmup=max(0, warmup),
            seed=args.seed,
            max_seconds=args.max_seconds,
            checkpoint_every=args.checkpoint_every,
        )

    def _run(self):
        args, dist = self.args, self.dist
        torch.manual_seed(args.seed)
        model, params, objective = self.setup_model()
        self.model = model
        self.trainable_params = sum(p.numel() for p in params)
        opts = self._options()
        self.opts = opts
        self.base_sha = sha256_file(args.base)
        config = {
            "command": self.method,
            "trainer": __version__,
            "base": self.base_sha,
            "data": self.data.sha256,
            "heldout": self.heldout.sha256 if self.heldout else None,
            "hyperparameters": self.hyperparameters(),
            "microBatchSize": opts.micro_batch_size,
            "warmup": opts.warmup,
            "seed": args.seed,
            "worldSize": dist.world,
            **self.extra_config(),
        }
        checkpoints = Checkpoints(args.checkpoint_dir or args.out + ".ckpt", config_hash(config))
        module = model
        if dist.active:
            from torch.nn.parallel import DistributedDataParallel

            ids = [dist.local_rank] if dist.device.type == "cuda" else None
            # No buffer changes during training (a quantized base's blocks are buffers): no
            # broadcast of them before every forward.
            module = DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)
        optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
        trainer = Trainer(dist, objective, module, model, params, optimizer, checkpoints, opts)
        result = LoopResult(steps_done=0)
        state = dist.broadcast(checkpoints.latest() if dist.is_main else None)
        start_step = trainer.restore(state, result) if state else 0
        start = {
            "examples": len(self.data.examples),
            "heldoutExamples": len(self.heldout.examples) if self.heldout else 0,
            "steps": opts.steps,
            "trainableParams": self.trainable_params,
            "device": dist.device.type,
            "worldSize": dist.world,
            "torch": torch.__version__,
            "trainer": __version__,
            **self.start_extra(),
        }
        if start_step:
            start["resumedFromStep"] = start_step
            log(f"resumed from checkpoint at step {start_step} of {opts.steps} ({checkpoints.directory})")
        emit("start", **start)
        trainer.run(self.data.examples, self.heldout.examples if self.heldout else None, result, start_step)
        if dist.is_main:
            self.write_output(result)
            try:
                self._write_report(result)
            except BaseException:
                # No report, no output: a failed run never leaves a file that looks finished.
                os.remove(args.out)
                raise
            checkpoints.remove_all()
            emit("done", **self.done_fields())

    def done_fields(self):
        return {"adapter": self.args.out, "report": self.args.report}

    def _write_report(self, result):
        args, dist = self.args, self.dist
        report = {
            "trainer": {"name": "macaron_trainer", "version": __version__},
            "torch": torch.__version__,
            "device": dist.device.type,
            "worldSize": dist.world,
            "method": self.method,
            "hyperparameters": self.hyperparameters(),
            "seed": args.seed,
            **self.report_extra(),
            "base": {"path": args.base, "sha256": self.base_sha},
            "data": {
                "path": args.data,
                "sha256": self.data.sha256,
                "examples": len(self.data.examples),
                "tokens": self.data.tokens,
            },
            "heldout": None
            if self.heldout is None
            else {
                "examples": len(self.heldout.examples),
                "sha256": self.heldout.sha256,
                "lossBefore": result.heldout_before,
                "lossAfter": result.heldout_after,
                **(
                    {}
                    if result.accuracy_before is None and result.accuracy_after is None
                    else {
                        "preferenceAccuracyBefore": result.accuracy_before,
                        "preferenceAccuracyAfter": result.accuracy_after,
                    }
                ),
            },
            "lossCurve": result.loss_curve,
            "stepsDone": result.steps_done,
            "trainableParams": self.trainable_params,
            "tokensPerSecond": round(result.tokens_per_second, 1),
            "seconds": round(result.seconds, 3),
        }
        text = json.dumps(report, indent=2, allow_nan=False) + "\n"
        atomic_write(args.report, [text.encode()])
