"""ggml block quantizations, dequantized in torch exactly as ggml's dequantize_row_* does.

llama.cpp ggml/src/ggml-quants.c (dequantize_row_q4_0 ... dequantize_row_q6_K) and its numpy
port gguf-py/gguf/quants.py, vectorized over blocks. Every value is d * q (+ m) in float32 with
the same operation order as ggml, so the float weights are the ones ggml's reference
dequantization gives, bit for bit. Works on any device (CPU, CUDA): the raw bytes are a uint8
tensor whose last dimension is whole blocks (one GGUF row).

Frozen quantized weights stay quantized in memory (`QuantWeight`); `quant_linear` dequantizes
the matrix inside the forward pass and again in the backward pass (for the input's gradient),
so at most one matrix is ever in float: QLoRA's scheme, at the cost of dequantizing twice per
step.
"""

import torch
import torch.nn.functional as F
from torch import nn

GGML_Q4_0, GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_Q8_0 = 2, 3, 6, 7, 8
GGML_Q4_K, GGML_Q5_K, GGML_Q6_K = 12, 13, 14
QK_K = 256

# ggml type -> (values per block, bytes per block, name)
BLOCKS = {
    GGML_Q4_0: (32, 18, "Q4_0"),
    GGML_Q4_1: (32, 20, "Q4_1"),
    GGML_Q5_0: (32, 22, "Q5_0"),
    GGML_Q5_1: (32, 24, "Q5_1"),
    GGML_Q8_0: (32, 34, "Q8_0"),
    GGML_Q4_K: (QK_K, 144, "Q4_K"),
    GGML_Q5_K: (QK_K, 176, "Q5_K"),
    GGML_Q6_K: (QK_K, 210, "Q6_K"),
}


def row_bytes(ggml_type, n):
    per, size, name = BLOCKS[ggml_type]
    if n % per:
        raise ValueError(f"a {name} row of {n} values is not whole blocks of {per}")
    return n // per * size


def _f16(b):
    """(n, 2) uint8 -> (n, 1) float32 (little-endian IEEE half)."""
    return b.contiguous().view(torch.float16).float()


def _shifts(values, device):
    return torch.tensor(values, dtype=torch.uint8, device=device)


def _nibbles(qs):
    """(n, k, 16|32...) bytes -> low nibbles then high nibbles along the last axis, as ggml orders
    them within one group: y[j] = qs[j] & 0xF, y[j + len] = qs[j] >> 4."""
    return torch.cat((qs & 0x0F, qs >> 4), dim=-1)


def _bits(b, device):
    """(n, k) bytes -> (n, 8k) bits, bit i of the little-endian word at [i]."""
    return ((b.unsqueeze(-1) >> _shifts(range(8), device)) & 1).reshape(b.shape[0], -1)


def _q4_0(b):
    d = _f16(b[:, :2])
    q = _nibbles(b[:, 2:]).to(torch.int16) - 8
    return q.float() * d


def _q4_1(b):
    d, m = _f16(b[:, :2]), _f16(b[:, 2:4])
    return _nibbles(b[:, 4:]).float() * d + m


def _q5_0(b):
    d = _f16(b[:, :2])
    q = (_nibbles(b[:, 6:]) | (_bits(b[:, 2:6], b.device) << 4)).to(torch.int16) - 16
    return q.float() * d


def _q5_1(b):
    d, m = _f16(b[:, :2]), _f16(b[:, 2:4])
    q = _nibbles(b[:, 8:]) | (_bits(b[:, 4:8], b.device) << 4)
    return q.float() * d + m


def _q8_0(b):
    d = _f16(b[:, :2])
    return b[:, 2:].contiguous().view(torch.int8).float() * d


def _k_scale_min(s):
    """Q4_K/Q5_K's 12 scale bytes -> (sc, m), 8 six-bit values each (ggml get_scale_min_k4)."""
    s = s.reshape(-1, 3, 4)
    d, m, md = s[:, 0], s[:, 1], s[:, 2]
    sc = torch.cat((d & 0x3F, (md & 0x0F) | ((d >> 2) & 0x30)), dim=-1)
    mn = torch.cat((m & 0x3F, (md >> 4) | ((m >> 2) & 0x30)), dim=-1)
    return sc.float(), mn.float()


def _q4_k(b):
    n = b.shape[0]
    d, dmin = _f16(b[:, :2]), _f16(b[:, 2:4])
    sc, mn = _k_scale_min(b[:, 4:16])
    d1 = (d * sc).unsqueeze(-1)  # (n, 8, 1): ggml's d1 = d * sc, m1 = min * m
    m1 = (dmin * mn).unsqueeze(-1)
    # 4 groups of 32 bytes: sub-block 2j is the low nibbles, 2j+1 the high ones.
    qs = b[:, 16:].reshape(n, 4, 1, 32)
    q = torch.cat((qs & 0x0F, qs >> 4), dim=2).reshape(n, 8, 32).float()
    return (d1 * q - m1).reshape(n, QK_K)


def _q5_k(b):
    n = b.shape[0]
    d, dmin = _f16(b[:, :2]), _f16(b[:, 2:4])
    sc, mn = _k_scale_min(b[:, 4:16])
    d1 = (d * sc).unsqueeze(-1)
    m1 = (dmin * mn).unsqueeze(-1)
    qh = b[:, 16:48].reshape(n, 1, 32)
    qs = b[:, 48:].reshape(n, 4, 1, 32)
    ql = torch.cat((qs & 0x0F, qs >> 4), dim=2).reshape(n, 8, 32)
    # Sub-block k takes bit k of each qh byte as its fifth bit.
    high = ((qh >> _shifts(range(8), b.device).reshape(1, 8, 1)) & 1) << 4
    return (d1 * (ql | high).float() - m1).reshape(n, QK_K)


def _q6_k(b):
    n = b.shape[0]
    ql, qh = b[:, :128], b[:, 128:192]
    sc = b[:, 192:208].contiguous().view(torch.int8).float()
    d = _f16(b[:, 208:210])
    # Two halves of 128 values; in each, 4 groups of 32: low nibbles of ql[0:32], of ql[32:64],
    # high nibbles of ql[0:32], of ql[32:64]; qh[0:32] gives bits 0-1, 2-3, 4-5, 6-7 to the groups.
    ql = ql.reshape(n, 2, 1, 64)
    low = torch.cat((ql & 0x0F, ql >> 4), dim=2).reshape(n, 2, 4, 32)
    high = (qh.reshape(n, 2, 1, 32) >> _shifts((0, 2, 4, 6), b.device).reshape(1, 1, 4, 1)) & 3
    q = ((low | (high << 4)).to(torch.int16) - 32).reshape(n, 16, 16).float()
    return ((d * sc).unsqueeze(-1) * q).reshape(n, QK_K)


_DEQUANT = {
    GGML_Q4_0: _q4_0,
    GGML_Q4_1: _q4_1,
    GGML_Q5_0: _q5_0,
    GGML_Q5_1: _q5_1,
    GGML_Q8_0: _q8_0,
    GGML_Q4_K: _q4_k,
    GGML_Q5_K: _q5_k,
    GGML_Q6_K: _q6_k,
}


def dequantize(raw, ggml_type):
    """raw: uint8 tensor (..., row bytes) -> float32 (..., row values)."""
    per, size, _ = BLOCKS[ggml_type]
    lead = raw.shape[:-1]
    blocks = raw.reshape(-1, size)
    return _DEQUANT[ggml_type](blocks).reshape(*lead, raw.shape[-1] // size * per)


class QuantWeight(nn.Module):
    """A frozen quantized matrix (or stack of matrices): raw GGUF bytes, dequantized on use.

    `shape` is the float shape (numpy order, (out, in) or (experts, out, in)). The bytes are a
    non-persistent buffer, so `.to(device)` moves them and no state dict carries them.
    """

    def __init__(self, raw, ggml_type, shape):
        super().__init__()
        self.register_buffer("raw", raw, persistent=False)
        self.ggml_type = ggml_type
        self.shape = tuple(shape)
        self.requires_grad = False

    def dequantize(self, index=None):
        raw = self.raw if index is None else self.raw[index]
        return dequantize(raw, self.ggml_type)

    def rows(self, ids):
        """Embedding lookup: dequantizes only the rows named by `ids`."""
        return dequantize(self.raw[ids], self.ggml_type)

    def extra_repr(self):
        return f"{BLOCKS[self.ggml_type][2]}, shape={self.shape}"


class _QuantLinear(torch.autograd.Function):
    """y = x W^T with W dequantized here and again in backward; no gradient for W (frozen)."""

    @staticmethod
    def forward(ctx, x, raw, ggml_type):
        ctx.save_for_backward(raw)
        ctx.ggml_type = ggml_type
        return F.linear(x, dequantize(raw, ggml_type))

    @staticmethod
    def backward(ctx, grad):
        (raw,) = ctx.saved_tensors
        grad_x = grad.matmul(dequantize(raw, ctx.ggml_type)) if ctx.needs_input_grad[0] else None
        return grad_x, None, None


def quant_linear(x, weight, index=None):
    """F.linear(x, W) for a QuantWeight (expert `index` of a stacked one)."""
    raw = weight.raw if index is None else weight.raw[index]
    if _ROUNDING["llama_cpu"]:
        return _llama_cpu_linear(x, raw, weight.ggml_type)
    return _QuantLinear.apply(x, raw, weight.ggml_type)


# --- llama.cpp's CPU rounding of the activations (the `logits --llama-cpu-rounding` check) ----

_ROUNDING = {"llama_cpu": False}
_Q8_K_TYPES = (GGML_Q4_K, GGML_Q5_K, GGML_Q6_K)
_Q8_1_TYPES = (GGML_Q4_1, GGML_Q5_1)


def set_llama_cpu_rounding(on):
    """Makes every quantized matmul round its input as llama.cpp's CPU backend does (below)."""
    _ROUNDING["llama_cpu"] = bool(on)


def llama_cpu_rounding(x, ggml_type):
    """x as llama.cpp's CPU matmul sees it against a `ggml_type` weight.

    ggml-cpu never dequantizes the weight: it quantizes the activations to the weight type's
    vec_dot_type and takes integer dot products per block. For Q4_0/Q5_0/Q8_0 that is Q8_0
    (quantize_row_q8_0: blocks of 32, q = round(x * 127 / max|x|), d = max|x| / 127 stored
    as F16), for
    Q4_1/Q5_1 Q8_1 (the same values, and s = d * sum(q) as F16 per block, which multiplies the
    weight block's min: `_llama_cpu_linear`), for the K-quants Q8_K
    (quantize_row_q8_K: blocks of 256, scale -127 / (the signed value of largest magnitude),
    q = round(x * scale) capped at 127, d = 1 / scale in F32). Rounding is to nearest even
    (ggml's nearest_int and the SIMD paths). The dequantized product of these equals llama.cpp's
    integer dot product up to float summation order, so with this the trainer's logits on a
    quantized base can be checked against llama.cpp's tightly.
    """
    shape = x.shape
    if ggml_type in _Q8_K_TYPES:
        b = x.reshape(-1, QK_K)
        idx = b.abs().argmax(-1, keepdim=True)
        peak = b.gather(-1, idx)
        iscale = torch.where(peak == 0, torch.zeros_like(peak), -127.0 / peak)
        q = torch.round(b * iscale).clamp(max=127)
        d = torch.where(peak == 0, torch.zeros_like(peak), 1.0 / iscale)
        return (q * d).reshape(shape)
    return _q8_blocks(x)[0]


def _q8_blocks(x):
    """Q8_0/Q8_1 rounding of x: (values as dequantized, Q8_1's per-block s)."""
    b = x.reshape(-1, 32)
    amax = b.abs().amax(-1, keepdim=True)
    d = amax / 127.0
    inv = torch.where(amax == 0, torch.zeros_like(amax), 127.0 / amax)
    q = torch.round(b * inv)
    s = (d * q.sum(-1, keepdim=True)).half().float()
    return (q * d.half().float()).reshape(x.shape), s.reshape(*x.shape[:-1], -1)


def _llama_cpu_linear(x, raw, ggml_type):
    """x W^T as llama.cpp's CPU backend computes it (no gradient: the parity check only)."""
    w = dequantize(raw, ggml_type)
    if ggml_type not in _Q8_1_TYPES:
        return F.linear(llama_cpu_rounding(x, ggml_type), w)
    # Q4_1/Q5_1 x Q8_1: sum over blocks of d_w d_x (q_w . q_x) + m_w s_x.
    xr, s = _q8_blocks(x)
    per, size, _ = BLOCKS[ggml_type]
    blocks = raw.reshape(*raw.shape[:-1], -1, size)
    m = blocks[..., 2:4].contiguous().view(torch.float16).float().squeeze(-1)  # (out, blocks)
    return F.linear(xr, w - m.repeat_interleave(per, dim=-1)) + F.linear(s, m)
