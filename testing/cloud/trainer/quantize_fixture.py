"""Rewrites a float GGUF base with its matrices quantized to ggml block types (test fixtures).

    PYTHONPATH=cloud/trainer python3 testing/cloud/trainer/quantize_fixture.py \
        IN.gguf OUT.gguf TYPE[,TYPE...] [PREFIX]
    PYTHONPATH=cloud/trainer python3 testing/cloud/trainer/quantize_fixture.py \
        --dequantize IN.gguf OUT.gguf
    ... JOB + JOB + ...      several of the above in one process (one torch import, ~1.5 s)

Every tensor with two or more dims (whose name starts with PREFIX, when given) becomes TYPE
(several types: assigned round-robin over the matrices, so one file mixes them), a mixture of
experts' stacked `ffn_*_exps` [n_in, n_out, n_expert] included: every row of every expert is
quantized, as llama-quantize does. 1-D tensors (norms) stay as they are. A matrix whose rows are
not whole blocks of its type is refused, naming it (llama-quantize would fall back to another
type; a fixture must be the type it says). Metadata is copied as is. `--dequantize` writes a
base back as F32 (the trainer's dequantization). The quantizers are simple round-to-nearest ones written from
ggml's block layouts (the legacy types as gguf-py's quantize_blocks; the K-quants with plain
min/max scales, not ggml's iterative scale search): valid blocks that ggml reads like any
others, a little less accurate than llama-quantize's. Deterministic.
"""

import sys

import numpy as np

from macaron_trainer.gguf_io import GgufFile, write_gguf
from macaron_trainer.quants import BLOCKS, row_bytes

TYPES = {name: t for t, (_, _, name) in BLOCKS.items()}


def _f16(x):
    """float array (n,) -> (n, 2) uint8 little-endian halves."""
    return np.asarray(x, dtype="<f2").reshape(-1, 1).view(np.uint8)


def _inv(d):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d == 0, 0.0, 1.0 / np.where(d == 0, 1.0, d))


def _pack_nibbles(q):
    """(n, 32) values 0..15 -> (n, 16) bytes: value j low nibble, value j + 16 high nibble."""
    return (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)


def _pack_bits(bits):
    """(n, 8k) 0/1 -> (n, k) bytes, bit i of the little-endian word at [i]."""
    return np.packbits(bits.astype(np.uint8), axis=-1, bitorder="little")


def _legacy(x, kind):
    """Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 as gguf-py's quantize_blocks does (blocks of 32)."""
    if kind in ("Q4_0", "Q5_0", "Q8_0"):
        top = {"Q4_0": -8.0, "Q5_0": -16.0, "Q8_0": 127.0}[kind]
        if kind == "Q8_0":
            d = np.abs(x).max(-1, keepdims=True) / top
        else:
            d = np.take_along_axis(x, np.abs(x).argmax(-1)[:, None], -1) / top
        d = d.astype(np.float16).astype(np.float32)
        if kind == "Q8_0":
            return np.concatenate([_f16(d), np.round(x * _inv(d)).astype(np.int8).view(np.uint8)], -1)
        off, hi = (8, 15) if kind == "Q4_0" else (16, 31)
        q = np.clip(np.trunc(x * _inv(d) + off + 0.5), 0, hi).astype(np.uint8)
        head = [_f16(d)]
    else:
        hi = 15 if kind == "Q4_1" else 31
        mn, mx = x.min(-1, keepdims=True), x.max(-1, keepdims=True)
        d = ((mx - mn) / hi).astype(np.float16).astype(np.float32)
        mn = mn.astype(np.float16).astype(np.float32)
        q = np.clip(np.trunc((x - mn) * _inv(d) + 0.5), 0, hi).astype(np.uint8)
        head = [_f16(d), _f16(mn)]
    if hi == 31:
        head.append(_pack_bits(q >> 4))
    return np.concatenate(head + [_pack_nibbles(q & 0x0F)], -1)


def _k_scales(sc, m):
    """8 six-bit scales and mins -> ggml's 12 packed bytes (the inverse of get_scale_min_k4)."""
    out = np.zeros((sc.shape[0], 12), dtype=np.uint8)
    out[:, 0:4] = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    out[:, 4:8] = m[:, :4] | ((m[:, 4:] >> 4) << 6)
    out[:, 8:12] = (sc[:, 4:] & 0x0F) | ((m[:, 4:] & 0x0F) << 4)
    return out


def _k45(x, bits):
    """Q4_K/Q5_K: super-blocks of 256, 8 sub-blocks of 32 with 6-bit scales and mins."""
    hi = (1 << bits) - 1
    n = x.shape[0]
    sub = x.reshape(n, 8, 32)
    lo = np.minimum(sub.min(-1), 0.0)
    scale, mins = (sub.max(-1) - lo) / hi, -lo
    d = (scale.max(-1, keepdims=True) / 63).astype(np.float16).astype(np.float32)
    dmin = (mins.max(-1, keepdims=True) / 63).astype(np.float16).astype(np.float32)
    sc = np.clip(np.round(scale * _inv(d)), 0, 63).astype(np.uint8)
    m = np.clip(np.round(mins * _inv(dmin)), 0, 63).astype(np.uint8)
    step = (d * sc)[..., None]
    q = np.clip(np.round((sub + (dmin * m)[..., None]) * _inv(step)), 0, hi).astype(np.uint8)
    # Sub-blocks 2g and 2g+1 share 32 bytes: low nibbles, high nibbles.
    qs = ((q[:, 0::2] & 0x0F) | ((q[:, 1::2] & 0x0F) << 4)).reshape(n, 128)
    parts = [_f16(d), _f16(dmin), _k_scales(sc, m)]
    if bits == 5:
        # qh[l] bit k: the fifth bit of sub-block k's value l.
        parts.append((((q >> 4) & 1) << np.arange(8, dtype=np.uint8)[None, :, None]).sum(1).astype(np.uint8))
    return np.concatenate(parts + [qs], -1)


def _q6_k(x):
    """Q6_K: super-blocks of 256, 16 sub-blocks of 16 with int8 scales, values q - 32."""
    n = x.shape[0]
    sub = x.reshape(n, 16, 16)
    scale = np.take_along_axis(sub, np.abs(sub).argmax(-1)[..., None], -1)[..., 0] / -32
    d = (np.abs(scale).max(-1, keepdims=True) / 127).astype(np.float16).astype(np.float32)
    sc = np.clip(np.round(scale * _inv(d)), -128, 127).astype(np.int8)
    step = (d * sc)[..., None]
    q = (np.clip(np.round(sub * _inv(step)), -32, 31) + 32).astype(np.uint8).reshape(n, 2, 4, 32)
    low = q & 0x0F
    ql = np.concatenate([low[:, :, 0] | (low[:, :, 2] << 4), low[:, :, 1] | (low[:, :, 3] << 4)], -1)
    qh = (q[:, :, 0] >> 4) | ((q[:, :, 1] >> 4) << 2) | ((q[:, :, 2] >> 4) << 4) | ((q[:, :, 3] >> 4) << 6)
    return np.concatenate([ql.reshape(n, 128), qh.reshape(n, 64), sc.view(np.uint8), _f16(d)], -1)


def quantize(data, type_name):
    """float32 numpy (*lead, n) -> uint8 blocks (*lead, row bytes) of `type_name`."""
    t = TYPES[type_name]
    per, size, _ = BLOCKS[t]
    x = np.ascontiguousarray(data, dtype=np.float32).reshape(-1, per)
    if type_name == "Q6_K":
        blocks = _q6_k(x)
    elif type_name in ("Q4_K", "Q5_K"):
        blocks = _k45(x, 4 if type_name == "Q4_K" else 5)
    else:
        blocks = _legacy(x, type_name)
    assert blocks.shape == (x.shape[0], size), (type_name, blocks.shape)
    return blocks.reshape(*data.shape[:-1], row_bytes(t, data.shape[-1]))


def main(argv):
    job = []
    for arg in argv + ["+"]:
        if arg != "+":
            job.append(arg)
        elif job:
            _job(job)
            job = []


def _job(argv):
    if argv[0] == "--dequantize":
        # The same model in F32, dequantized by the trainer (llama.cpp on it vs on the blocks
        # isolates llama.cpp's activation rounding).
        gguf = GgufFile(argv[1])
        write_gguf(argv[2], gguf.metadata, [(n, gguf.tensor(n), 0) for n in gguf.tensors])
        return
    src, dst, types = argv[0], argv[1], argv[2].split(",")
    prefix = argv[3] if len(argv) > 3 else ""
    for t in types:
        if t not in TYPES:
            raise SystemExit(f"unknown type {t}; one of {', '.join(TYPES)}")
    gguf = GgufFile(src)
    tensors, matrices = [], 0
    for name, info in gguf.tensors.items():
        data = gguf.tensor(name)
        if len(info.dims) < 2 or not name.startswith(prefix):
            tensors.append((name, data, 0))
            continue
        type_name = types[matrices % len(types)]
        matrices += 1
        per = BLOCKS[TYPES[type_name]][0]
        if data.shape[-1] % per:
            raise SystemExit(
                f"{src}: {name} has rows of {data.shape[-1]} values, not whole {type_name} blocks of {per}"
            )
        raw = quantize(data, type_name)
        tensors.append((name, raw, TYPES[type_name], data.shape))
    write_gguf(dst, gguf.metadata, tensors)


if __name__ == "__main__":
    main(sys.argv[1:])
