import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { GGML_TYPE_F16, GGML_TYPE_F32 } from "./ggml-types";
import { GGUF_MAGIC, GgufValueType } from "./value-types";

/**
 * A GGUF v3 writer for the small models and adapters this project generates (tests, the demo
 * model, benchmarks). It writes only what those need: scalar and array metadata and F32/F16
 * tensors. The same input always gives the same bytes: metadata and tensors are written in
 * the order given, and there are no timestamps or random padding.
 */

export type GgufScalarType = "string" | "uint32" | "int32" | "float32" | "bool" | "uint64";

export type GgufWriteValue =
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "uint32" | "int32" | "float32"; readonly value: number }
  | { readonly type: "uint64"; readonly value: number | bigint }
  | { readonly type: "bool"; readonly value: boolean }
  | { readonly type: "array"; readonly itemType: "string"; readonly value: readonly string[] }
  | {
      readonly type: "array";
      readonly itemType: "uint32" | "int32" | "float32";
      readonly value: ArrayLike<number>;
    }
  | { readonly type: "array"; readonly itemType: "bool"; readonly value: readonly boolean[] };

/** Shorthands for metadata values, e.g. `{ "llama.block_count": gv.u32(2) }`. */
export const gv = {
  str: (value: string): GgufWriteValue => ({ type: "string", value }),
  u32: (value: number): GgufWriteValue => ({ type: "uint32", value }),
  i32: (value: number): GgufWriteValue => ({ type: "int32", value }),
  u64: (value: number | bigint): GgufWriteValue => ({ type: "uint64", value }),
  f32: (value: number): GgufWriteValue => ({ type: "float32", value }),
  bool: (value: boolean): GgufWriteValue => ({ type: "bool", value }),
  strs: (value: readonly string[]): GgufWriteValue => ({ type: "array", itemType: "string", value }),
  i32s: (value: ArrayLike<number>): GgufWriteValue => ({ type: "array", itemType: "int32", value }),
  f32s: (value: ArrayLike<number>): GgufWriteValue => ({ type: "array", itemType: "float32", value }),
};

export interface GgufWriteTensor {
  readonly name: string;
  /** ggml order: dims[0] (ne0) varies fastest in `data`. */
  readonly dims: readonly number[];
  readonly type: "F32" | "F16";
  /** Row-major values, or a function that makes them when the tensor is written (big models). */
  readonly data: Float32Array | (() => Float32Array);
}

export interface GgufWriteSpec {
  /** Written in insertion order; `general.alignment` is added when absent. */
  readonly metadata: Readonly<Record<string, GgufWriteValue>>;
  readonly tensors: readonly GgufWriteTensor[];
}

export const GGUF_ALIGNMENT = 32;

const SCALAR_TYPE: Record<GgufScalarType, GgufValueType> = {
  string: GgufValueType.String,
  uint32: GgufValueType.Uint32,
  int32: GgufValueType.Int32,
  float32: GgufValueType.Float32,
  bool: GgufValueType.Bool,
  uint64: GgufValueType.Uint64,
};

/** Growable little-endian byte sink for the header part of the file. */
class ByteSink {
  private buf = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u8(v: number): void {
    this.reserve(1);
    this.length = this.buf.writeUInt8(v, this.length);
  }
  u32(v: number): void {
    this.reserve(4);
    this.length = this.buf.writeUInt32LE(v, this.length);
  }
  i32(v: number): void {
    this.reserve(4);
    this.length = this.buf.writeInt32LE(v, this.length);
  }
  f32(v: number): void {
    this.reserve(4);
    this.length = this.buf.writeFloatLE(v, this.length);
  }
  u64(v: number | bigint): void {
    this.reserve(8);
    this.length = this.buf.writeBigUInt64LE(BigInt(v), this.length);
  }
  str(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.reserve(bytes.length);
    bytes.copy(this.buf, this.length);
    this.length += bytes.length;
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    this.reserve(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function writeScalar(sink: ByteSink, type: GgufScalarType, value: unknown): void {
  switch (type) {
    case "string":
      return sink.str(value as string);
    case "uint32":
      return sink.u32(value as number);
    case "int32":
      return sink.i32(value as number);
    case "float32":
      return sink.f32(value as number);
    case "bool":
      return sink.u8(value ? 1 : 0);
    case "uint64":
      return sink.u64(value as number | bigint);
  }
}

function writeValue(sink: ByteSink, v: GgufWriteValue): void {
  if (v.type === "array") {
    sink.u32(GgufValueType.Array);
    sink.u32(SCALAR_TYPE[v.itemType]);
    sink.u64(v.value.length);
    for (let i = 0; i < v.value.length; i++) writeScalar(sink, v.itemType, v.value[i]);
    return;
  }
  sink.u32(SCALAR_TYPE[v.type]);
  writeScalar(sink, v.type, v.value);
}

function elementCount(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

function tensorByteSize(t: GgufWriteTensor): number {
  return elementCount(t.dims) * (t.type === "F32" ? 4 : 2);
}

/** Encodes the header, metadata and tensor infos, padded to the data section. */
function encodeHeader(spec: GgufWriteSpec): { header: Buffer; offsets: number[] } {
  const sink = new ByteSink();
  const metadata: Record<string, GgufWriteValue> = { ...spec.metadata };
  if (!("general.alignment" in metadata)) metadata["general.alignment"] = gv.u32(GGUF_ALIGNMENT);
  const entries = Object.entries(metadata);
  sink.u32(GGUF_MAGIC);
  sink.u32(3);
  sink.u64(spec.tensors.length);
  sink.u64(entries.length);
  for (const [key, value] of entries) {
    sink.str(key);
    writeValue(sink, value);
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const t of spec.tensors) {
    sink.str(t.name);
    sink.u32(t.dims.length);
    // GGUF stores dims in ggml order (ne0 first), the order the caller gave.
    for (const d of t.dims) sink.u64(d);
    sink.u32(t.type === "F32" ? GGML_TYPE_F32 : GGML_TYPE_F16);
    sink.u64(offset);
    offsets.push(offset);
    offset += tensorByteSize(t);
    offset += (GGUF_ALIGNMENT - (offset % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
  }
  sink.pad(GGUF_ALIGNMENT);
  return { header: Buffer.from(sink.bytes()), offsets };
}

const f32View = new Float32Array(1);
const u32View = new Uint32Array(f32View.buffer);

/** float32 → IEEE half, round to nearest even (what numpy's astype(float16) does). */
export function toHalf(value: number): number {
  f32View[0] = value;
  const x = u32View[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rem > mid || (rem === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  return sign | (half + (rem > 0x1000 || (rem === 0x1000 && half & 1) ? 1 : 0));
}

function encodeTensor(t: GgufWriteTensor): Buffer {
  const data = typeof t.data === "function" ? t.data() : t.data;
  const n = elementCount(t.dims);
  if (data.length !== n) {
    throw new Error(`tensor ${t.name}: ${data.length} values for dims [${t.dims.join(", ")}]`);
  }
  if (t.type === "F32") {
    const out = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) out.writeFloatLE(data[i]!, i * 4);
    return out;
  }
  const halves = new Uint16Array(n);
  for (let i = 0; i < n; i++) halves[i] = toHalf(data[i]!);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeUInt16LE(halves[i]!, i * 2);
  return out;
}

/** The whole file as chunks, generating tensor data lazily one tensor at a time. */
export function* encodeGgufChunks(spec: GgufWriteSpec): Generator<Buffer> {
  const { header } = encodeHeader(spec);
  yield header;
  for (const t of spec.tensors) {
    const bytes = encodeTensor(t);
    yield bytes;
    const pad = (GGUF_ALIGNMENT - (bytes.length % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
    if (pad) yield Buffer.alloc(pad);
  }
}

/** The whole file in memory (tests, small adapters). */
export function encodeGguf(spec: GgufWriteSpec): Buffer {
  return Buffer.concat([...encodeGgufChunks(spec)]);
}

/**
 * Writes a GGUF file atomically: a temp file beside the target, then a rename, so a reader
 * never sees a half-written model (the demo model is made while the UI waits for it).
 */
export async function writeGguf(path: string, spec: GgufWriteSpec): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(tmp, "w");
  try {
    for (const chunk of encodeGgufChunks(spec)) await handle.write(chunk);
    await handle.close();
    await rename(tmp, path);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
