"""PEFT-format output (`train --peft-out DIR`): the trained LoRA as a Hugging Face PEFT folder.

`adapter_config.json` + `adapter_model.safetensors` with Hugging Face module names
(`base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight`, lora_A (r, n_in), lora_B
(n_out, r), F32): what `peft.PeftModel.save_pretrained` writes for a LoRA. It is the trainer's
GGUF adapter in the other layout, so the app's PEFT converter (native/gguf/peft-lora.ts) can be
checked against it. On llama bases q_proj/k_proj's B rows are put back in Hugging Face's
rotate-half order (the inverse of llama.cpp's LlamaModel.permute); qwen2/qwen3 need nothing.
safetensors is written here (header length, JSON header, raw bytes): Debian has no package.
"""

import json
import struct

import numpy as np

from .errors import TrainerError
from .storage import atomic_write

_HF = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "ffn_gate_inp": "mlp.gate",
}


def hf_module(gguf_name):
    """'blk.3.attn_q.weight' -> 'model.layers.3.self_attn.q_proj'; 'output.weight' -> 'lm_head'."""
    if gguf_name == "output.weight":
        return "lm_head"
    parts = gguf_name.split(".")
    if parts[0] != "blk" or parts[2] not in _HF:
        raise TrainerError("bad_args", f"{gguf_name} has no Hugging Face name for a PEFT adapter")
    return f"model.layers.{parts[1]}.{_HF[parts[2]]}"


def unpermute_rows(b, heads):
    """Inverse of LlamaModel.permute on the rows of b (n_out, r): llama.cpp order -> HF order."""
    n_out, r = b.shape
    head_dim = n_out // heads
    return b.reshape(heads, head_dim // 2, 2, r).swapaxes(1, 2).reshape(n_out, r)


def encode_safetensors(tensors, metadata=None):
    """tensors: list of (name, float32 numpy array); returns the file as a list of bytes chunks."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors:
        blob = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return [struct.pack("<Q", len(text)), text, *blobs]


def write_peft(directory, deltas, rank, alpha, base_gguf, base_name):
    """Writes the deltas ({gguf tensor name: LoraDelta}) as a PEFT LoRA folder."""
    arch = base_gguf.get("general.architecture")
    heads = base_gguf.get(f"{arch}.attention.head_count")
    kv_heads = base_gguf.get(f"{arch}.attention.head_count_kv", heads)
    order = [n for n in base_gguf.tensors if n in deltas]
    tensors, modules = [], []
    for n in order:
        d = deltas[n]
        module = hf_module(n)
        a = d.a.detach().cpu().float().numpy()
        b = d.b.detach().cpu().float().numpy()
        if arch == "llama" and module.endswith(("q_proj", "k_proj")):
            b = unpermute_rows(b, heads if module.endswith("q_proj") else kv_heads)
        tensors.append((f"base_model.model.{module}.lora_A.weight", a))
        tensors.append((f"base_model.model.{module}.lora_B.weight", b))
        short = module.split(".")[-1]
        if short not in modules:
            modules.append(short)
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_name,
        "r": int(rank),
        "lora_alpha": float(alpha),
        "lora_dropout": 0.0,
        "use_rslora": False,
        "use_dora": False,
        "bias": "none",
        "fan_in_fan_out": False,
        "target_modules": sorted(modules),
        "inference_mode": True,
    }
    atomic_write(f"{directory}/adapter_model.safetensors", encode_safetensors(tensors))
    atomic_write(f"{directory}/adapter_config.json", [json.dumps(config, indent=2).encode("utf-8")])
