/**
 * Files that parse as GGUF but that llama.cpp cannot use, refused with a reason before the
 * engine sees them (issue 27, item 11): adapter tensors of a type or kind llama.cpp's LoRA
 * loader refuses (its only message is "Failed to initialize LoRA adapter"), and a model whose
 * vocabulary one flipped byte broke (llama.cpp aborts the process on a repeated token).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoAdapterSpec } from "./adapters";
import { gpt2ByteToUnicode } from "./byte-vocab";
import { assertAdapterFits, assertLoadableModel, readGguf, type GgufFile } from "./reader";
import { tinyModelSpec } from "./tiny-model";
import { tinyQwenSpec } from "./tiny-qwen";
import { encodeGguf, gv, type GgufWriteSpec } from "./writer";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("gguf-validation-");
let base: GgufFile;
let baseBytes: Buffer;
let n = 0;

beforeAll(async () => {
  baseBytes = encodeGguf(tinyModelSpec("tiny"));
  base = await readGguf(await file(baseBytes));
});

async function file(bytes: Buffer): Promise<string> {
  const path = join(dir.path, `f${n++}.gguf`);
  await writeFile(path, bytes);
  return path;
}

/** A GGUF string as written: u64 length, then the bytes. */
function ggufString(s: string | Buffer): Buffer {
  const bytes = typeof s === "string" ? Buffer.from(s) : s;
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(bytes.length));
  return Buffer.concat([len, bytes]);
}

/** Sets the ggml type id of tensor `name` in an encoded file (after its dims in the tensor table). */
function setTensorType(bytes: Buffer, name: string, type: number): Buffer {
  const out = Buffer.from(bytes);
  const at = out.indexOf(ggufString(name));
  expect(at).toBeGreaterThan(0);
  const nDimsAt = at + 8 + Buffer.byteLength(name);
  const nDims = out.readUInt32LE(nDimsAt);
  out.writeUInt32LE(type, nDimsAt + 4 + nDims * 8);
  return out;
}

function adapterBytes(spec: GgufWriteSpec = demoAdapterSpec("coding")): Buffer {
  return encodeGguf(spec);
}

describe("adapter tensors llama.cpp's LoRA loader refuses", () => {
  it("accepts the demo adapter as it is", async () => {
    await expect(assertAdapterFits(await file(adapterBytes()), base)).resolves.toBeDefined();
  });

  it.each([
    [26, "I32"],
    [25, "I16"],
  ])("refuses a lora tensor of type %i (%s) with the type in the message", async (type, name) => {
    const path = await file(setTensorType(adapterBytes(), "output.weight.lora_b", type));
    // The file itself is a well-formed GGUF: only the adapter check can tell.
    await expect(readGguf(path)).resolves.toBeDefined();
    await expect(assertAdapterFits(path, base)).rejects.toMatchObject({
      code: "incompatible_adapter",
      message: expect.stringContaining(`output.weight.lora_b has type ${name}`) as unknown,
    });
  });

  it("refuses a tensor that is not a lora_a/lora_b weight", async () => {
    const spec = demoAdapterSpec("coding");
    const path = await file(
      adapterBytes({
        ...spec,
        tensors: [
          ...spec.tensors,
          { name: "output.weight", dims: [64, 4], type: "F32", data: new Float32Array(256) },
        ],
      }),
    );
    await expect(assertAdapterFits(path, base)).rejects.toMatchObject({
      code: "incompatible_adapter",
      message: expect.stringContaining("output.weight is not a lora_a/lora_b weight") as unknown,
    });
  });

  it("refuses a lora_b without its lora_a", async () => {
    const spec = demoAdapterSpec("coding");
    const path = await file(
      adapterBytes({ ...spec, tensors: spec.tensors.filter((t) => !t.name.endsWith("lora_a")) }),
    );
    await expect(assertAdapterFits(path, base)).rejects.toThrow(
      /output\.weight\.lora_b has no matching lora_a/,
    );
  });

  it("refuses a non-numeric alpha", async () => {
    const spec = demoAdapterSpec("coding");
    const path = await file(
      adapterBytes({ ...spec, metadata: { ...spec.metadata, "adapter.lora.alpha": gv.str("one") } }),
    );
    await expect(assertAdapterFits(path, base)).rejects.toThrow(/alpha is not a number/);
  });
});

describe("a model's vocabulary", () => {
  it("passes for the fixture models", async () => {
    await expect(assertLoadableModel(await file(baseBytes))).resolves.toBeDefined();
    await expect(assertLoadableModel(await file(encodeGguf(tinyQwenSpec("qwen3"))))).resolves.toBeDefined();
  });

  it("refuses one flipped byte that repeats a token (llama.cpp aborts on it)", async () => {
    const bytes = Buffer.from(baseBytes);
    // Byte token "a" (id 0x61) becomes "b": two tokens now read "b".
    const tokensAt = bytes.indexOf(Buffer.from("tokenizer.ggml.tokens"));
    const at = bytes.indexOf(ggufString("a"), tokensAt);
    bytes[at + 8] = 0x62;
    const path = await file(bytes);
    await expect(readGguf(path)).resolves.toBeDefined();
    await expect(assertLoadableModel(path)).rejects.toMatchObject({
      code: "corrupt",
      message: expect.stringMatching(/token 98 "b" repeats token 97/) as unknown,
    });
  });

  it("refuses a flipped byte that makes a token string invalid UTF-8", async () => {
    const bytes = Buffer.from(baseBytes);
    const token0 = Buffer.from(gpt2ByteToUnicode()[0]!); // "Ā" = C4 80
    const tokensAt = bytes.indexOf(Buffer.from("tokenizer.ggml.tokens"));
    const at = bytes.indexOf(ggufString(token0), tokensAt);
    bytes[at + 9] = 0x41; // C4 41: a lead byte without its continuation
    await expect(assertLoadableModel(await file(bytes))).rejects.toThrow(
      /tokenizer\.ggml\.tokens\[0\] is not valid UTF-8/,
    );
  });

  it("refuses a token count that does not match the embedding rows", async () => {
    const spec = tinyModelSpec("tiny");
    const tokens = spec.metadata["tokenizer.ggml.tokens"]!;
    const types = spec.metadata["tokenizer.ggml.token_type"]!;
    const cut = <T>(v: T): T => ({ ...v, value: (v as { value: unknown[] }).value.slice(0, -1) });
    const bytes = encodeGguf({
      ...spec,
      metadata: {
        ...spec.metadata,
        "tokenizer.ggml.tokens": cut(tokens),
        "tokenizer.ggml.token_type": cut(types),
      },
    });
    await expect(assertLoadableModel(await file(bytes))).rejects.toThrow(
      /vocabulary has 258 tokens but token_embd\.weight has 259 rows/,
    );
  });

  it("refuses a byte-level vocabulary without the newline token, and special ids outside it", async () => {
    const spec = tinyModelSpec("tiny");
    const tokens = (spec.metadata["tokenizer.ggml.tokens"] as unknown as { value: string[] }).value;
    const renamed = tokens.map((t) => (t === gpt2ByteToUnicode()[10] ? "<|newline-gone|>" : t));
    const noNewline = encodeGguf({
      ...spec,
      metadata: { ...spec.metadata, "tokenizer.ggml.tokens": gv.strs(renamed) },
    });
    await expect(assertLoadableModel(await file(noNewline))).rejects.toThrow(/lacks the token of byte 0x0a/);
    const badEos = encodeGguf({
      ...spec,
      metadata: { ...spec.metadata, "tokenizer.ggml.eos_token_id": gv.u32(5000) },
    });
    await expect(assertLoadableModel(await file(badEos))).rejects.toThrow(
      /eos token id 5000 is outside its 259 tokens/,
    );
  });

  it("refuses a weight of a type that is never stored (Q8_K)", async () => {
    // Q8_K blocks are 256 wide; the tiny model's rows are 64: build the check on a copy of the
    // file whose tensor is F32 and relabel it, so the size check passes first.
    const big = tinyModelSpec("tiny");
    const spec: GgufWriteSpec = {
      ...big,
      tensors: [
        ...big.tensors,
        { name: "extra.weight", dims: [256, 1], type: "F32", data: new Float32Array(256) },
      ],
    };
    const path = await file(setTensorType(encodeGguf(spec), "extra.weight", 15));
    await expect(assertLoadableModel(path)).rejects.toThrow(
      /extra\.weight" has type Q8_K, which is never a stored weight/,
    );
  });
});
