"""LoRA deltas, as llama.cpp applies them: y = W x + scale * (alpha / r) * B (A x).

GGUF `X.lora_a` has dims [n_in, r] (torch (r, n_in)), `X.lora_b` dims [r, n_out] (torch
(n_out, r)). A starts kaiming-uniform (as PEFT), B at zero, so step 0 is the base model.
"""

import math

import torch
from torch import nn

from .errors import TrainerError
from .gguf_io import GGML_F32, GgufFile, MetaValue, T_F32, T_STR, write_gguf

DEFAULT_TARGETS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")
# ffn_gate_inp: a mixture-of-experts router (qwen3moe), whose experts get no LoRA here.
ALL_TARGETS = DEFAULT_TARGETS + ("output", "ffn_gate_inp")


class LoraDelta(nn.Module):
    def __init__(self, n_in, n_out, rank, alpha, dropout=0.0, scale=1.0):
        super().__init__()
        self.rank, self.alpha = rank, alpha
        self.a = nn.Parameter(torch.empty(rank, n_in))
        self.b = nn.Parameter(torch.zeros(n_out, rank))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5))
        self.factor = scale * alpha / rank
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return (self.dropout(x) @ self.a.t()) @ self.b.t() * self.factor


def short_name(gguf_name):
    """'blk.3.attn_q.weight' -> 'attn_q'; 'output.weight' -> 'output'."""
    parts = gguf_name.split(".")
    return parts[2] if parts[0] == "blk" else parts[0]


def attach(model, targets, rank, alpha, dropout=0.0):
    """Adds fresh LoRA deltas to every Linear whose short name is in `targets`; returns them by name.

    Targets the base does not have (a MoE model has no ffn_gate/ffn_up/ffn_down) are skipped;
    none matching at all is an error.
    """
    deltas = {}
    layers = model.linear_layers()
    for name, linear in layers.items():
        if short_name(name) in targets:
            n_out, n_in = linear.weight.shape
            linear.lora = LoraDelta(n_in, n_out, rank, alpha, dropout)
            deltas[name] = linear.lora
    if not deltas:
        available = ",".join(sorted({short_name(n) for n in layers}))
        raise TrainerError(
            "bad_args", f"none of the targets {','.join(targets)} is in this base model; it has {available}"
        )
    return deltas


def read_adapter(path):
    """Reads a LoRA GGUF: (alpha, {base tensor name: (A, B)} as float32 numpy, architecture)."""
    try:
        gguf = GgufFile(path)
    except FileNotFoundError as err:
        raise TrainerError("bad_parent", f"adapter {path} does not exist") from err
    except TrainerError as err:
        raise TrainerError("bad_parent", err.message) from err
    if gguf.get("general.type") != "adapter" or gguf.get("adapter.type") != "lora":
        raise TrainerError("bad_parent", f"{path}: not a LoRA adapter (general.type/adapter.type)")
    pairs = {}
    for name in gguf.tensors:
        if name.endswith(".lora_a"):
            base = name[: -len(".lora_a")]
            if base + ".lora_b" not in gguf.tensors:
                raise TrainerError("bad_parent", f"{path}: {name} has no matching .lora_b")
            pairs[base] = (gguf.tensor(name), gguf.tensor(base + ".lora_b"))
    if not pairs:
        raise TrainerError("bad_parent", f"{path}: no LoRA tensors")
    ranks = {a.shape[0] for a, _ in pairs.values()}
    if len(ranks) != 1:
        raise TrainerError("bad_parent", f"{path}: mixed LoRA ranks {sorted(ranks)} are not supported")
    alpha = float(gguf.get("adapter.lora.alpha", 0.0)) or float(ranks.pop())
    return alpha, pairs, gguf.get("general.architecture")


def load_adapter(model, path, scale=1.0, dropout=0.0, arch=None):
    """Attaches the adapter in `path` to `model`, checking it fits; returns (deltas, rank, alpha, targets)."""
    alpha, pairs, adapter_arch = read_adapter(path)
    if arch is not None and adapter_arch != arch:
        raise TrainerError("bad_parent", f"{path}: adapter architecture {adapter_arch!r} != base {arch!r}")
    layers = model.linear_layers()
    deltas = {}
    rank = None
    for name, (a, b) in pairs.items():
        linear = layers.get(name)
        if linear is None:
            raise TrainerError("bad_parent", f"{path}: {name} is not a projection of this base model")
        n_out, n_in = linear.weight.shape
        r = a.shape[0]
        if a.shape != (r, n_in) or b.shape != (n_out, r):
            raise TrainerError(
                "bad_parent",
                f"{path}: {name} LoRA shapes A{a.shape} B{b.shape} do not fit the base weight "
                f"({n_out}, {n_in}) (adapter for another base?)",
            )
        rank = r
        delta = LoraDelta(n_in, n_out, r, alpha, dropout, scale)
        with torch.no_grad():
            delta.a.copy_(torch.from_numpy(a))
            delta.b.copy_(torch.from_numpy(b))
        linear.lora = delta
        deltas[name] = delta
    targets = sorted({short_name(n) for n in deltas})
    return deltas, rank, alpha, targets


def write_adapter(path, deltas, alpha, base_gguf, name="macaron LoRA"):
    """Writes the deltas as a llama.cpp LoRA GGUF (F32), tensors in base-model order."""
    arch = base_gguf.get("general.architecture")
    metadata = {
        "general.architecture": MetaValue(T_STR, arch),
        "general.type": MetaValue(T_STR, "adapter"),
        "general.name": MetaValue(T_STR, name),
        "adapter.type": MetaValue(T_STR, "lora"),
        "adapter.lora.alpha": MetaValue(T_F32, float(alpha)),
    }
    order = [n for n in base_gguf.tensors if n in deltas]
    tensors = []
    for n in order:
        d = deltas[n]
        tensors.append((n + ".lora_a", d.a.detach().cpu().float().numpy(), GGML_F32))
        tensors.append((n + ".lora_b", d.b.detach().cpu().float().numpy(), GGML_F32))
    write_gguf(path, metadata, tensors)
