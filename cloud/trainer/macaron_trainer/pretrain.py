"""`pretrain`: full-parameter training of a base model; writes a base GGUF with the input's
metadata (general.name replaced by --name) and the same tensor names, shapes and types."""

from .errors import TrainerError
from .gguf_io import GGML_F16, GGML_F32, GgufFile, str_value, write_gguf
from .model import load_base
from .session import Session
from .sft import SequenceObjective


class PretrainSession(Session):
    method = "pretrain"
    kinds = ("lm", "sft")

    def setup_model(self):
        self.base_gguf, cfg, model = load_base(self.args.base, trainable=True)
        writable = (GGML_F32, GGML_F16)
        for info in self.base_gguf.tensors.values():
            if info.type not in writable:
                raise TrainerError(
                    "bad_base",
                    f"{self.args.base}: tensor {info.name} is quantized; pretrain needs an F32 or F16 base",
                )
        self._load_data(cfg.vocab, cfg.context_length)
        model.to(self.dist.device)
        params = [p for p in model.parameters() if p.requires_grad]
        return model, params, SequenceObjective(self.dist.device)

    def hyperparameters(self):
        a = self.args
        return {
            "lr": a.lr,
            "epochs": self.epochs,
            "steps": self.opts.steps,
            "batchSize": a.batch_size,
            "warmup": self.opts.warmup,
        }

    def extra_config(self):
        return {"name": self.args.name}

    def done_fields(self):
        # "adapter" as in train's done event (the spec's shape); "model" says what it is.
        return {"adapter": self.args.out, "model": self.args.out, "report": self.args.report}

    def write_output(self, result):
        base: GgufFile = self.base_gguf
        metadata = dict(base.metadata)  # same keys, types and order
        if self.args.name:
            metadata["general.name"] = str_value(self.args.name)
        trained = {n: p.detach().cpu().float().numpy() for n, p in self.model.named_gguf_tensors().items()}
        tensors = []
        for name, info in base.tensors.items():
            array = trained[name] if name in trained else base.tensor(name)
            # A quantized (or BF16) input is written back as F32: the trained weights are float.
            out_type = info.type if info.type in (GGML_F32, GGML_F16) else GGML_F32
            tensors.append((name, array.reshape(info.shape), out_type))
        write_gguf(self.args.out, metadata, tensors)


def run_pretrain(args):
    PretrainSession(args).run()
