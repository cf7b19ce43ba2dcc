"""`train`: LoRA training (SFT, DPO or GRPO) with the base frozen; writes a llama.cpp LoRA GGUF."""

import copy

from .dpo import DpoObjective
from .errors import TrainerError
from .events import log
from .grpo import GrpoObjective
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
        self.kinds = {"dpo": ("dpo",), "grpo": ("grpo",)}.get(args.method, ("sft", "lm"))
        self.groups = None

    def setup_model(self):
        args, device = self.args, self.dist.device
        self.base_gguf, cfg, model = load_base(args.base)
        self._load_data(cfg.vocab, cfg.context_length)
        if args.method == "grpo":
            self._drop_groups_without_signal()
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
        if args.method in ("dpo", "grpo") and args.parent:
            # The reference is the parent as it was: a frozen copy of its deltas.
            for name, delta in self.deltas.items():
                frozen = copy.deepcopy(delta)
                frozen.requires_grad_(False)
                reference[name] = frozen.to(device)
        model.to(device)
        params = [p for d in self.deltas.values() for p in d.parameters()]
        if args.method == "dpo":
            objective = DpoObjective(device, args.beta, model, reference)
        elif args.method == "grpo":
            objective = GrpoObjective(device, args.beta, args.clip, model, reference)
        else:
            objective = SequenceObjective(device)
        return model, params, objective

    def _drop_groups_without_signal(self):
        """GRPO: a group whose rewards are all equal has zero advantages and carries no signal;
        it is left out of training (and of the held-out loss), and the run says how many. A group
        with a baseline has none only when every reward equals the baseline."""
        counts = {}
        for what, data in (("training", self.data), ("heldout", self.heldout)):
            if data is None:
                continue
            kept = [e for e in data.examples if e.has_signal]
            counts[what] = {"groups": len(data.examples), "zeroVariance": len(data.examples) - len(kept)}
            if counts[what]["zeroVariance"]:
                log(
                    f"grpo: {counts[what]['zeroVariance']} of {len(data.examples)} {what} groups have "
                    "rewards that are all equal (no signal): left out"
                )
            data.examples = kept
        self.groups = counts
        if not self.data.examples:
            raise TrainerError(
                "empty_data",
                f"every one of the {counts['training']['groups']} groups in {self.data.path} has rewards "
                "that are all equal: GRPO has no signal to learn from",
            )
        if self.heldout is not None and not self.heldout.examples:
            self.heldout = None

    def start_extra(self):
        if self.groups is None:
            return {}
        train = self.groups["training"]
        return {"groups": train["groups"], "zeroVarianceGroups": train["zeroVariance"]}

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
            **({"clip": a.clip} if self.method == "grpo" else {}),
        }

    def extra_config(self):
        return {"parent": self.parent_sha}

    def report_extra(self):
        parent = None if not self.args.parent else {"path": self.args.parent, "sha256": self.parent_sha}
        return {"parent": parent, **({"groups": self.groups} if self.groups is not None else {})}

    def write_output(self, result):
        # A fixed name (not the output path) keeps the bytes a function of the inputs only.
        name = f"macaron {self.method} LoRA"
        write_adapter(self.args.out, self.deltas, self.alpha, self.base_gguf, name=name)
        if self.args.peft_out:
            base_name = self.base_gguf.get("general.name") or self.args.base
            write_peft(self.args.peft_out, self.deltas, self.rank, self.alpha, self.base_gguf, base_name)


def run_train(args):
    LoraSession(args).run()
