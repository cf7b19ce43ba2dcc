"""GGUF v3 reading (metadata + tensors through a numpy memmap) and writing.

Only what the trainer needs: every metadata type; F32/F16/BF16 and the block quantizations
Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q5_K/Q6_K in (quants.py); F32/F16 out, and raw quantized blocks
(fixtures).
Metadata is kept with its on-disk types so a rewritten base keeps exactly the same metadata.
Numpy shapes are GGUF dims reversed: dims [ne0=in, ne1=out] -> numpy (out, in).
"""

import struct
from dataclasses import dataclass

import numpy as np
import torch

from .errors import TrainerError
from .quants import BLOCKS, dequantize, row_bytes
from .storage import atomic_write

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# GGUF metadata value types.
T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64, T_F64 = range(13)
_SCALAR = {
    T_U8: "<B",
    T_I8: "<b",
    T_U16: "<H",
    T_I16: "<h",
    T_U32: "<I",
    T_I32: "<i",
    T_F32: "<f",
    T_BOOL: "<?",
    T_U64: "<Q",
    T_I64: "<q",
    T_F64: "<d",
}
_NUMPY = {
    T_U8: "<u1",
    T_I8: "<i1",
    T_U16: "<u2",
    T_I16: "<i2",
    T_U32: "<u4",
    T_I32: "<i4",
    T_F32: "<f4",
    T_BOOL: "?",
    T_U64: "<u8",
    T_I64: "<i8",
    T_F64: "<f8",
}

# ggml tensor types the trainer reads.
GGML_F32, GGML_F16, GGML_Q8_0, GGML_BF16 = 0, 1, 8, 30
GGML_TYPE_NAMES = {GGML_F32: "F32", GGML_F16: "F16", GGML_BF16: "BF16"}
GGML_TYPE_NAMES.update({t: name for t, (_, _, name) in BLOCKS.items()})


@dataclass
class MetaValue:
    type: int
    value: object
    item_type: int = -1  # arrays only


@dataclass
class TensorInfo:
    name: str
    dims: tuple  # ggml order (ne0 first)
    type: int
    offset: int  # relative to the data section

    @property
    def shape(self):
        return tuple(reversed(self.dims))


class GgufFile:
    """A parsed GGUF file; tensor data stays on disk until `tensor()` is called."""

    def __init__(self, path):
        self.path = path
        self.metadata = {}
        self.tensors = {}
        with open(path, "rb") as f:
            self._parse(f)
        self._mm = np.memmap(path, dtype=np.uint8, mode="r") if self.tensors else None

    def _parse(self, f):
        r = _Reader(f, self.path)
        if r.raw(4) != GGUF_MAGIC:
            raise TrainerError("bad_base", f"{self.path}: not a GGUF file (bad magic)")
        version = r.scalar(T_U32)
        if version not in (2, 3):
            raise TrainerError("bad_base", f"{self.path}: GGUF version {version} is not supported (need 3)")
        n_tensors, n_kv = r.scalar(T_U64), r.scalar(T_U64)
        for _ in range(n_kv):
            key = r.string()
            self.metadata[key] = r.value(r.scalar(T_U32))
        for _ in range(n_tensors):
            name = r.string()
            n_dims = r.scalar(T_U32)
            dims = tuple(r.scalar(T_U64) for _ in range(n_dims))
            self.tensors[name] = TensorInfo(name, dims, r.scalar(T_U32), r.scalar(T_U64))
        align = self.alignment
        pos = f.tell()
        self.data_offset = pos + (align - pos % align) % align

    @property
    def alignment(self):
        meta = self.metadata.get("general.alignment")
        return int(meta.value) if meta is not None else DEFAULT_ALIGNMENT

    def get(self, key, default=None):
        meta = self.metadata.get(key)
        return default if meta is None else meta.value

    def tensor(self, name):
        """The tensor as float32 numpy, numpy shape (dims reversed)."""
        info = self.tensors[name]
        count = int(np.prod(info.dims, dtype=np.int64))
        start = self.data_offset + info.offset
        if info.type == GGML_F32:
            data = self._mm[start : start + count * 4].view("<f4").astype(np.float32)
        elif info.type == GGML_F16:
            data = self._mm[start : start + count * 2].view("<f2").astype(np.float32)
        elif info.type == GGML_BF16:
            raw = self._mm[start : start + count * 2].view("<u2").astype(np.uint32)
            data = (raw << 16).view(np.float32)
        elif info.type in BLOCKS:
            data = dequantize(torch.from_numpy(self.raw(name)), info.type).numpy()
        else:
            raise TrainerError(
                "bad_base",
                f"{self.path}: tensor {name} has ggml type {info.type}; the trainer reads "
                + ", ".join(GGML_TYPE_NAMES.values())
                + " only",
            )
        return data.reshape(info.shape)

    def is_quantized(self, name):
        return self.tensors[name].type in BLOCKS

    def raw(self, name):
        """A quantized tensor's blocks, copied into memory: uint8 (*shape[:-1], row bytes)."""
        info = self.tensors[name]
        try:
            size = row_bytes(info.type, info.dims[0])
        except ValueError as err:
            raise TrainerError("bad_base", f"{self.path}: tensor {name}: {err}") from err
        rows = int(np.prod(info.dims[1:], dtype=np.int64))
        start = self.data_offset + info.offset
        return np.array(self._mm[start : start + rows * size]).reshape(*info.shape[:-1], size)


class _Reader:
    def __init__(self, f, path):
        self.f = f
        self.path = path

    def raw(self, n):
        data = self.f.read(n)
        if len(data) != n:
            raise TrainerError("bad_base", f"{self.path}: truncated GGUF header")
        return data

    def scalar(self, t):
        fmt = _SCALAR[t]
        return struct.unpack(fmt, self.raw(struct.calcsize(fmt)))[0]

    def string(self):
        return self.raw(self.scalar(T_U64)).decode("utf-8", errors="replace")

    def value(self, t):
        if t == T_STR:
            return MetaValue(t, self.string())
        if t == T_ARR:
            item, n = self.scalar(T_U32), self.scalar(T_U64)
            if item == T_STR:
                return MetaValue(t, [self.string() for _ in range(n)], item)
            if item in _NUMPY:
                arr = np.frombuffer(self.raw(n * np.dtype(_NUMPY[item]).itemsize), dtype=_NUMPY[item])
                return MetaValue(t, arr.copy(), item)
            raise TrainerError("bad_base", f"{self.path}: unsupported metadata array item type {item}")
        if t in _SCALAR:
            return MetaValue(t, self.scalar(t))
        raise TrainerError("bad_base", f"{self.path}: unsupported metadata type {t}")


# --- writing -----------------------------------------------------------------------------------


def _encode_value(out, meta):
    out.append(struct.pack("<I", meta.type))
    if meta.type == T_STR:
        _encode_str(out, meta.value)
    elif meta.type == T_ARR:
        out.append(struct.pack("<IQ", meta.item_type, len(meta.value)))
        if meta.item_type == T_STR:
            for s in meta.value:
                _encode_str(out, s)
        else:
            out.append(np.asarray(meta.value, dtype=_NUMPY[meta.item_type]).tobytes())
    else:
        out.append(struct.pack(_SCALAR[meta.type], meta.value))


def _encode_str(out, s):
    data = s.encode("utf-8")
    out.append(struct.pack("<Q", len(data)))
    out.append(data)


def write_gguf(path, metadata, tensors):
    """Writes a GGUF v3 file atomically.

    metadata: ordered dict key -> MetaValue; tensors: list of (name, float32 numpy array in numpy
    shape, ggml type F32 or F16), or (name, uint8 blocks (*shape[:-1], row bytes), a quantized
    ggml type, numpy shape) for raw quantized data. The same input always gives the same bytes.
    """
    meta = dict(metadata)
    if "general.alignment" not in meta:
        meta["general.alignment"] = MetaValue(T_U32, DEFAULT_ALIGNMENT)
    align = int(meta["general.alignment"].value)
    header = [GGUF_MAGIC, struct.pack("<IQQ", 3, len(tensors), len(meta))]
    for key, value in meta.items():
        _encode_str(header, key)
        _encode_value(header, value)
    blobs, offset = [], 0
    for name, array, ggml_type, *quant_shape in tensors:
        shape = tuple(quant_shape[0]) if quant_shape else array.shape
        if quant_shape:
            if ggml_type not in BLOCKS or array.dtype != np.uint8:
                raise ValueError(f"raw data for {name} must be uint8 blocks of a quantized type")
            if array.shape != (*shape[:-1], row_bytes(ggml_type, shape[-1])):
                raise ValueError(f"raw data for {name} has shape {array.shape}, not {shape}'s blocks")
            blob = np.ascontiguousarray(array).tobytes()
        elif ggml_type == GGML_F32:
            blob = np.ascontiguousarray(array, dtype="<f4").tobytes()
        elif ggml_type == GGML_F16:
            blob = np.ascontiguousarray(array, dtype="<f2").tobytes()
        else:
            raise ValueError(f"cannot write ggml type {ggml_type} for {name}")
        _encode_str(header, name)
        dims = tuple(reversed(shape))
        header.append(struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims))
        header.append(struct.pack("<IQ", ggml_type, offset))
        blobs.append(blob)
        offset += len(blob) + (align - len(blob) % align) % align
    head = b"".join(header)
    head += b"\0" * ((align - len(head) % align) % align)

    def chunks():
        yield head
        for blob in blobs:
            yield blob
            yield b"\0" * ((align - len(blob) % align) % align)

    atomic_write(path, chunks())


def str_value(s):
    return MetaValue(T_STR, s)
