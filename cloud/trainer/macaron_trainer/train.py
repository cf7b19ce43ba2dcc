"""`train`: LoRA training (SFT or DPO) with the base frozen; writes a llama.cpp LoRA GGUF."""

import copy

from .dpo import DpoObjective
from .events import log
from .lora import attach, load_adapter, short_name, write_adapter
from .model import load_base
from .peft_io import write_peft
from .session import Session
from .sft import SequenceObjective
from .storage import sha256_file


class LoraSession(Session):
    def __init__(self, args):
        super().__init__(args)
        self.method = args.method
        self.kinds = ("dpo",) if args.method == "dpo" else ("sft", "lm")

    def setup_model(self):
        args, device = self.args, self.dist.device
        self.base_gguf, cfg, model = load_base(args.base)
        self._load_data(cfg.vocab, cfg.context_length)
        self.parent_sha = None
        if args.parent:
            self.deltas, self.rank, self.alpha, self.targets = load_adapter(
                model, args.parent, dropout=args.dropout, arch=cfg.arch
            )
            self.parent_sha = sha256_file(args.parent)
            targets = ",".join(self.targets)
            log(f"continuing from {args.parent}: rank {self.rank}, alpha {self.alpha}, targets {targets}")
        else:
            targets = list(args.targets)
            if "output" in targets and model.tied:
                log("this base ties output to token_embd: no LoRA on output")
                targets.remove("output")
            self.deltas = attach(model, targets, args.rank, args.alpha, args.dropout)
            attached = {short_name(n) for n in self.deltas}
            skipped = [t for t in targets if t not in attached]
            if skipped:
                log(f"this base has no {','.join(skipped)} layers: no LoRA there")
            targets = [t for t in targets if t in attached]
            self.rank, self.alpha, self.targets = args.rank, args.alpha, targets
        reference = {}
        if args.method == "dpo" and args.parent:
            # The reference is the parent as it was: a frozen copy of its deltas.
            for name, delta in self.deltas.items():
                frozen = copy.deepcopy(delta)
                frozen.requires_grad_(False)
                reference[name] = frozen.to(device)
        model.to(device)
        params = [p for d in self.deltas.values() for p in d.parameters()]
        if args.method == "dpo":
            objective = DpoObjective(device, args.beta, model, reference)
        else:
            objective = SequenceObjective(device)
        return model, params, objective

    def hyperparameters(self):
        a = self.args
        return {
            "rank": self.rank,
            "alpha": self.alpha,
            "dropout": a.dropout,
            "lr": a.lr,
            "epochs": getattr(self, "epochs", None),
            "steps": self.opts.steps if hasattr(self, "opts") else a.steps,
            "batchSize": a.batch_size,
            "beta": a.beta,
            "targets": self.targets,
        }

    def extra_config(self):
        return {"parent": self.parent_sha}

    def report_extra(self):
        parent = None if not self.args.parent else {"path": self.args.parent, "sha256": self.parent_sha}
        return {"parent": parent}

    def write_output(self, result):
        # A fixed name (not the output path) keeps the bytes a function of the inputs only.
        name = f"macaron {self.method} LoRA"
        write_adapter(self.args.out, self.deltas, self.alpha, self.base_gguf, name=name)
        if self.args.peft_out:
            base_name = self.base_gguf.get("general.name") or self.args.base
            write_peft(self.args.peft_out, self.deltas, self.rank, self.alpha, self.base_gguf, base_name)


def run_train(args):
    LoraSession(args).run()
