"""The llama (and qwen2, qwen3, qwen3moe) forward pass in torch, matching llama.cpp's graph.

llama.cpp LLM_ARCH_LLAMA: RMSNorm x/sqrt(mean(x^2)+eps)*w, Q/K/V projections, RoPE (NORM mode:
adjacent pairs (x[2i], x[2i+1]) rotated by pos*freq_base^(-2i/n_rot); qwen2 uses NEOX mode:
pairs (x[i], x[i+n_rot/2])), causal softmax attention scaled 1/sqrt(head_dim) with GQA (query
head h reads KV head h // (heads/kv_heads)), output projection, residual, RMSNorm, SwiGLU
down(silu(gate x) * up x), residual; final norm and the output matrix (token_embd when absent).

qwen3 (src/models/qwen3.cpp) is qwen2 without the QKV biases plus an RMSNorm over each head of
Q and K (blk.N.attn_q_norm / attn_k_norm, [head_dim]) before RoPE; its head_dim is
attention.key_length, so heads * head_dim may differ from the embedding width. qwen3moe
(qwen3moe.cpp) replaces the MLP by a mixture of experts (llama.cpp build_moe_ffn with
SOFTMAX gating and norm_w = true): p = softmax(ffn_gate_inp h) over all experts, the
expert_used_count largest are kept, their weights renormalised to sum 1 (the sum clamped below
at 6.1e-5), optionally scaled by expert_weights_scale, and the output is
sum_k w_k * down_k(silu(gate_k h) * up_k h).
"""

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .errors import TrainerError
from .quants import QuantWeight, quant_linear

SUPPORTED_ARCHITECTURES = ("llama", "qwen2", "qwen3", "qwen3moe")
NEOX_ARCHITECTURES = ("qwen2", "qwen3", "qwen3moe")
QK_NORM_ARCHITECTURES = ("qwen3", "qwen3moe")
MOE_ARCHITECTURES = ("qwen3moe",)
_SDPA = getattr(F, "scaled_dot_product_attention", None)
ATTENTION = ("attn_q", "attn_k", "attn_v", "attn_output")
PROJECTIONS = ATTENTION + ("ffn_gate", "ffn_up", "ffn_down")
# The MoE block's LoRA-able linear: the router (llama.cpp applies LoRA to ffn_gate_inp too).
MOE_PROJECTIONS = ATTENTION + ("ffn_gate_inp",)
# ggml's clamp of the top-k weights' sum (the smallest F16 normal).
MOE_WEIGHT_SUM_MIN = 6.103515625e-5


@dataclass
class LlamaConfig:
    arch: str
    embedding: int
    layers: int
    feed_forward: int
    heads: int
    kv_heads: int
    head_dim: int
    rope_dims: int
    rope_base: float
    rope_scale: float  # llama.cpp freq_scale (1/linear scaling factor)
    rms_eps: float
    context_length: int
    vocab: int
    neox: bool
    qk_norm: bool = False
    experts: int = 0
    experts_used: int = 0
    expert_feed_forward: int = 0
    expert_weights_scale: float = 0.0  # 0: none (llama.cpp's default)

    @property
    def projections(self):
        return MOE_PROJECTIONS if self.experts else PROJECTIONS


def _required(gguf, key):
    value = gguf.get(key)
    if value is None:
        raise TrainerError("bad_base", f"{gguf.path}: metadata key {key} is missing")
    return value


def config_from_gguf(gguf):
    """Reads the hyperparameters, refusing what the forward pass here does not implement."""
    arch = gguf.get("general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise TrainerError(
            "bad_base",
            f"{gguf.path}: general.architecture is {arch!r}; the trainer supports "
            + ", ".join(SUPPORTED_ARCHITECTURES),
        )
    if gguf.get("general.type", "model") != "model":
        kind = gguf.get("general.type")
        raise TrainerError("bad_base", f"{gguf.path}: general.type is {kind!r}, not a base model")
    p = arch + "."
    experts = int(gguf.get(p + "expert_count", 0) or 0)
    if experts and arch not in MOE_ARCHITECTURES:
        raise TrainerError(
            "bad_base",
            f"{gguf.path}: {p}expert_count > 0 (mixture of experts) is supported for "
            + ", ".join(MOE_ARCHITECTURES)
            + " only",
        )
    if arch in MOE_ARCHITECTURES and not experts:
        raise TrainerError("bad_base", f"{gguf.path}: {p}expert_count is missing ({arch} is a MoE model)")
    embedding = int(_required(gguf, p + "embedding_length"))
    heads = int(_required(gguf, p + "attention.head_count"))
    head_dim = int(gguf.get(p + "attention.key_length", embedding // heads))
    if "token_embd.weight" not in gguf.tensors:
        raise TrainerError("bad_base", f"{gguf.path}: tensor token_embd.weight is missing")
    vocab = int(gguf.tensors["token_embd.weight"].dims[1])
    scaling = gguf.get(p + "rope.scaling.type", "none")
    rope_scale = 1.0
    if scaling == "linear":
        rope_scale = 1.0 / float(gguf.get(p + "rope.scaling.factor", 1.0))
    elif scaling not in ("none", None):
        raise TrainerError("bad_base", f"{gguf.path}: {p}rope.scaling.type {scaling!r} is not supported")
    if "rope_freqs.weight" in gguf.tensors:
        raise TrainerError("bad_base", f"{gguf.path}: rope_freqs.weight (llama3 rope scaling) is unsupported")
    cfg = LlamaConfig(
        arch=arch,
        embedding=embedding,
        layers=int(_required(gguf, p + "block_count")),
        feed_forward=int(_required(gguf, p + "feed_forward_length")),
        heads=heads,
        kv_heads=int(gguf.get(p + "attention.head_count_kv", heads)),
        head_dim=head_dim,
        rope_dims=int(gguf.get(p + "rope.dimension_count", head_dim)),
        rope_base=float(gguf.get(p + "rope.freq_base", 10000.0)),
        rope_scale=rope_scale,
        rms_eps=float(_required(gguf, p + "attention.layer_norm_rms_epsilon")),
        context_length=int(gguf.get(p + "context_length", 2048)),
        vocab=vocab,
        neox=arch in NEOX_ARCHITECTURES,
        qk_norm=arch in QK_NORM_ARCHITECTURES,
    )
    if experts:
        used = int(_required(gguf, p + "expert_used_count"))
        if not 0 < used <= experts:
            raise TrainerError("bad_base", f"{gguf.path}: {p}expert_used_count {used} is not in 1..{experts}")
        if gguf.get(p + "expert_shared_count", 0) or gguf.get(p + "expert_group_count", 0):
            raise TrainerError("bad_base", f"{gguf.path}: shared experts or expert groups are unsupported")
        cfg.experts = experts
        cfg.experts_used = used
        # llama.cpp: expert_feed_forward_length, else feed_forward_length / expert_used_count.
        expert_ff = gguf.get(p + "expert_feed_forward_length", 0)
        cfg.expert_feed_forward = int(expert_ff or cfg.feed_forward // used)
        cfg.expert_weights_scale = float(gguf.get(p + "expert_weights_scale", 0.0) or 0.0)
    if cfg.qk_norm and cfg.rope_dims != cfg.head_dim:
        raise TrainerError("bad_base", f"{gguf.path}: {arch} needs rope.dimension_count == head_dim")
    if cfg.heads % cfg.kv_heads:
        raise TrainerError("bad_base", f"{gguf.path}: head_count {heads} is not a multiple of head_count_kv")
    return cfg


def expected_shapes(cfg):
    """Numpy shapes (out, in) of every tensor the forward pass reads, by GGUF name."""
    E, FF, q, kv = cfg.embedding, cfg.feed_forward, cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
    X, XF = cfg.experts, cfg.expert_feed_forward
    shapes = {"token_embd.weight": (cfg.vocab, E), "output_norm.weight": (E,)}
    for layer in range(cfg.layers):
        b = f"blk.{layer}."
        shapes.update(
            {
                b + "attn_norm.weight": (E,),
                b + "attn_q.weight": (q, E),
                b + "attn_k.weight": (kv, E),
                b + "attn_v.weight": (kv, E),
                b + "attn_output.weight": (E, q),
                b + "ffn_norm.weight": (E,),
            }
        )
        if cfg.qk_norm:
            shapes[b + "attn_q_norm.weight"] = (cfg.head_dim,)
            shapes[b + "attn_k_norm.weight"] = (cfg.head_dim,)
        if X:
            shapes.update(
                {
                    b + "ffn_gate_inp.weight": (X, E),
                    b + "ffn_gate_exps.weight": (X, XF, E),
                    b + "ffn_up_exps.weight": (X, XF, E),
                    b + "ffn_down_exps.weight": (X, E, XF),
                }
            )
        else:
            shapes.update(
                {
                    b + "ffn_gate.weight": (FF, E),
                    b + "ffn_up.weight": (FF, E),
                    b + "ffn_down.weight": (E, FF),
                }
            )
    return shapes


def _frozen(weight, trainable):
    """A parameter, or a frozen QuantWeight as it is (dequantized on use)."""
    if isinstance(weight, QuantWeight):
        return weight
    return nn.Parameter(weight, requires_grad=trainable)


def linear(x, weight, index=None, bias=None):
    """F.linear for a float parameter or a QuantWeight (expert `index` of a stacked weight)."""
    if isinstance(weight, QuantWeight):
        y = quant_linear(x, weight, index)
        return y if bias is None else y + bias
    return F.linear(x, weight if index is None else weight[index], bias)


class Linear(nn.Module):
    """y = W x (+ b) (+ the LoRA delta when one is attached). W may be a frozen QuantWeight."""

    def __init__(self, weight, bias=None, trainable=False):
        super().__init__()
        self.weight = _frozen(weight, trainable)
        self.bias = None if bias is None else nn.Parameter(bias, requires_grad=trainable)
        self.lora = None

    def forward(self, x):
        y = linear(x, self.weight, bias=self.bias)
        if self.lora is not None:
            y = y + self.lora(x)
        return y


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class Rope:
    """cos/sin tables for positions 0..n-1, applied in llama.cpp's NORM or NEOX pairing."""

    def __init__(self, cfg):
        self.cfg = cfg
        self._cache = {}

    def tables(self, n, device):
        key = (n, str(device))
        if key not in self._cache:
            c = self.cfg
            i = np.arange(c.rope_dims // 2, dtype=np.float64)
            inv = c.rope_base ** (-2.0 * i / c.rope_dims)
            theta = np.arange(n, dtype=np.float64)[:, None] * inv[None, :] * c.rope_scale
            cos = torch.tensor(np.cos(theta), dtype=torch.float32, device=device)
            sin = torch.tensor(np.sin(theta), dtype=torch.float32, device=device)
            self._cache[key] = (cos, sin)
        return self._cache[key]

    def apply(self, x):
        """x: (B, T, heads, head_dim)."""
        n_rot = self.cfg.rope_dims
        cos, sin = self.tables(x.shape[1], x.device)
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        rot, rest = x[..., :n_rot], x[..., n_rot:]
        if self.cfg.neox:
            x0, x1 = rot[..., : n_rot // 2], rot[..., n_rot // 2 :]
            out = torch.cat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        else:
            pairs = rot.reshape(*rot.shape[:-1], n_rot // 2, 2)
            x0, x1 = pairs[..., 0], pairs[..., 1]
            out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)
        return torch.cat((out, rest), dim=-1) if rest.shape[-1] else out


class Experts(nn.Module):
    """qwen3moe's expert MLPs, computed per expert for the tokens routed to it."""

    def __init__(self, cfg, get, prefix, trainable):
        super().__init__()
        self.cfg = cfg
        # numpy shapes (experts, out, in): expert e's matrices are [e].
        self.gate = _frozen(get(prefix + "ffn_gate_exps.weight"), trainable)
        self.up = _frozen(get(prefix + "ffn_up_exps.weight"), trainable)
        self.down = _frozen(get(prefix + "ffn_down_exps.weight"), trainable)

    def forward(self, h, router_logits):
        c = self.cfg
        shape = h.shape
        h = h.reshape(-1, shape[-1])
        probs = torch.softmax(router_logits.reshape(-1, c.experts), dim=-1)
        weights, chosen = torch.topk(probs, c.experts_used, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True).clamp(min=MOE_WEIGHT_SUM_MIN)
        if c.expert_weights_scale not in (0.0, 1.0):
            weights = weights * c.expert_weights_scale
        out = torch.zeros_like(h)
        for e in range(c.experts):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            if rows.numel() == 0:
                continue
            x = h[rows]
            y = linear(F.silu(linear(x, self.gate, e)) * linear(x, self.up, e), self.down, e)
            out = out.index_add(0, rows, y * weights[rows, slot].unsqueeze(-1))
        return out.reshape(shape)


class Block(nn.Module):
    def __init__(self, cfg, get, layer, trainable):
        super().__init__()
        b = f"blk.{layer}."
        self.cfg = cfg
        self.attn_norm = nn.Parameter(get(b + "attn_norm.weight"), requires_grad=trainable)
        self.ffn_norm = nn.Parameter(get(b + "ffn_norm.weight"), requires_grad=trainable)
        bias = (lambda n: get(b + n + ".bias", optional=True)) if cfg.arch == "qwen2" else (lambda n: None)
        for name in cfg.projections:
            setattr(self, name, Linear(get(b + name + ".weight"), bias(name), trainable))
        self.attn_q_norm = self.attn_k_norm = None
        if cfg.qk_norm:
            self.attn_q_norm = nn.Parameter(get(b + "attn_q_norm.weight"), requires_grad=trainable)
            self.attn_k_norm = nn.Parameter(get(b + "attn_k_norm.weight"), requires_grad=trainable)
        self.experts = Experts(cfg, get, b, trainable) if cfg.experts else None

    def forward(self, x, rope, mask):
        c = self.cfg
        B, T, _ = x.shape
        h = rms_norm(x, self.attn_norm, c.rms_eps)
        q = self.attn_q(h).view(B, T, c.heads, c.head_dim)
        k = self.attn_k(h).view(B, T, c.kv_heads, c.head_dim)
        if c.qk_norm:
            q = rms_norm(q, self.attn_q_norm, c.rms_eps)
            k = rms_norm(k, self.attn_k_norm, c.rms_eps)
        q = rope.apply(q).transpose(1, 2)
        k = rope.apply(k).transpose(1, 2)
        v = self.attn_v(h).view(B, T, c.kv_heads, c.head_dim).transpose(1, 2)
        if c.kv_heads != c.heads:
            k = k.repeat_interleave(c.heads // c.kv_heads, dim=1)
            v = v.repeat_interleave(c.heads // c.kv_heads, dim=1)
        if _SDPA is not None:
            # torch >= 2: fused kernel, same math (default scale 1/sqrt(head_dim)), far less memory.
            attn = _SDPA(q, k, v, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(c.head_dim)) + mask
            attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + self.attn_output(attn.transpose(1, 2).reshape(B, T, c.heads * c.head_dim))
        h = rms_norm(x, self.ffn_norm, c.rms_eps)
        if self.experts is not None:
            return x + self.experts(h, self.ffn_gate_inp(h))
        return x + self.ffn_down(F.silu(self.ffn_gate(h)) * self.ffn_up(h))


class LlamaModel(nn.Module):
    """The base model; `trainable=False` freezes every weight (LoRA training).

    `weights` maps GGUF names to float numpy arrays, or to QuantWeights (frozen quantized
    matrices, which stay quantized in memory and are dequantized layer by layer in the forward
    and backward passes) or to callables giving either (read one tensor at a time on load).
    """

    def __init__(self, cfg, weights, trainable=False):
        super().__init__()
        self.cfg = cfg
        self.tied = "output.weight" not in weights

        def get(name, optional=False):
            if name not in weights:
                if optional:
                    return None
                raise TrainerError("bad_base", f"tensor {name} is missing from the base model")
            value = weights[name]
            value = value() if callable(value) else value
            if isinstance(value, QuantWeight):
                return value
            return torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))

        self.token_embd = _frozen(get("token_embd.weight"), trainable)
        self.blocks = nn.ModuleList(Block(cfg, get, layer, trainable) for layer in range(cfg.layers))
        self.output_norm = nn.Parameter(get("output_norm.weight"), requires_grad=trainable)
        self.output = None if self.tied else Linear(get("output.weight"), None, trainable)
        self.rope = Rope(cfg)

    def forward(self, ids):
        """ids: (B, T) long -> logits (B, T, V). Right padding needs no key mask: causal."""
        T = ids.shape[1]
        if isinstance(self.token_embd, QuantWeight):
            x = self.token_embd.rows(ids)
        else:
            x = F.embedding(ids, self.token_embd)
        mask = torch.full((T, T), float("-inf"), device=ids.device).triu(1)
        for block in self.blocks:
            x = block(x, self.rope, mask)
        x = rms_norm(x, self.output_norm, self.cfg.rms_eps)
        if self.output is None:
            return linear(x, self.token_embd)
        return self.output(x)

    def linear_layers(self):
        """GGUF weight name -> Linear module, for attaching LoRA."""
        layers = {}
        for i, block in enumerate(self.blocks):
            for name in self.cfg.projections:
                layers[f"blk.{i}.{name}.weight"] = getattr(block, name)
        if self.output is not None:
            layers["output.weight"] = self.output
        return layers

    def named_gguf_tensors(self):
        """GGUF tensor name -> parameter, for writing a full base model back."""
        out = {"token_embd.weight": self.token_embd, "output_norm.weight": self.output_norm}
        for i, block in enumerate(self.blocks):
            out[f"blk.{i}.attn_norm.weight"] = block.attn_norm
            out[f"blk.{i}.ffn_norm.weight"] = block.ffn_norm
            if block.attn_q_norm is not None:
                out[f"blk.{i}.attn_q_norm.weight"] = block.attn_q_norm
                out[f"blk.{i}.attn_k_norm.weight"] = block.attn_k_norm
            if block.experts is not None:
                out[f"blk.{i}.ffn_gate_exps.weight"] = block.experts.gate
                out[f"blk.{i}.ffn_up_exps.weight"] = block.experts.up
                out[f"blk.{i}.ffn_down_exps.weight"] = block.experts.down
        for name, linear in self.linear_layers().items():
            out[name] = linear.weight
            if linear.bias is not None:
                out[name[: -len(".weight")] + ".bias"] = linear.bias
        return out


def load_base(path, trainable=False):
    """Reads and checks a base GGUF; returns (GgufFile, LlamaConfig, LlamaModel).

    Frozen (LoRA) bases keep quantized matrices quantized (QuantWeight); a trainable base
    (pretraining) is dequantized to float32. Tensors are read one at a time, so the peak on load
    is the model as it is held plus one tensor.
    """
    from .gguf_io import GgufFile

    try:
        gguf = GgufFile(path)
    except FileNotFoundError as err:
        raise TrainerError("bad_base", f"base model {path} does not exist") from err
    cfg = config_from_gguf(gguf)
    for name, shape in expected_shapes(cfg).items():
        info = gguf.tensors.get(name)
        if info is None:
            raise TrainerError("bad_base", f"{path}: tensor {name} is missing")
        if info.shape != shape:
            raise TrainerError("bad_base", f"{path}: tensor {name} has shape {info.shape}, expected {shape}")
    out = gguf.tensors.get("output.weight")
    if out is not None and out.shape != (cfg.vocab, cfg.embedding):
        raise TrainerError("bad_base", f"{path}: tensor output.weight has shape {out.shape}")

    def reader(name):
        info = gguf.tensors[name]
        if not trainable and gguf.is_quantized(name) and len(info.dims) >= 2:
            return lambda: QuantWeight(torch.from_numpy(gguf.raw(name)), info.type, info.shape)
        return lambda: gguf.tensor(name)

    weights = {name: reader(name) for name in gguf.tensors if name != "rope_freqs.weight"}
    return gguf, cfg, LlamaModel(cfg, weights, trainable)
