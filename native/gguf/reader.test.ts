import { mkdir, open, truncate, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { demoAdapterSpec, wrongBaseAdapterSpec } from "./adapters";
import {
  assertAdapterFits,
  assertLoadableModel,
  classifyGguf,
  GgufError,
  readGguf,
  summarizeModel,
  type GgufErrorCode,
} from "./reader";
import { TINY_MODEL_NAME, tinyModelSpec } from "./tiny-model";
import { encodeGguf, encodeGgufChunks, gv, type GgufWriteSpec } from "./writer";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("gguf-reader-");
let basePath: string;
let baseBytes: Buffer;

beforeAll(async () => {
  baseBytes = encodeGguf(tinyModelSpec("tiny"));
  basePath = await file("base.gguf", baseBytes);
});

async function file(name: string, bytes: Buffer | string): Promise<string> {
  const path = join(dir.path, name);
  await writeFile(path, bytes);
  return path;
}

async function expectGgufError(
  promise: Promise<unknown>,
  code: GgufErrorCode,
  message: RegExp | string,
): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GgufError);
  expect((err as GgufError).code).toBe(code);
  if (typeof message === "string") expect((err as GgufError).message).toBe(message);
  else expect((err as GgufError).message).toMatch(message);
}

describe("readGguf round trip", () => {
  it("reads back every metadata type and the tensor table the writer wrote", async () => {
    const spec: GgufWriteSpec = {
      metadata: {
        "general.architecture": gv.str("llama"),
        "t.str": gv.str("héllo ✓"),
        "t.u32": gv.u32(4_000_000_000),
        "t.i32": gv.i32(-5),
        "t.u64": gv.u64(2n ** 40n),
        "t.big": gv.u64(2n ** 63n),
        "t.f32": gv.f32(0.25),
        "t.bool": gv.bool(true),
        "t.strs": gv.strs(["a", "", "c"]),
        "t.f32s": gv.f32s([1.5, -2]),
        "t.i32s": gv.i32s(new Int32Array(2000)),
      },
      tensors: [
        { name: "w", dims: [4, 3], type: "F16", data: new Float32Array(12) },
        { name: "n", dims: [5], type: "F32", data: new Float32Array(5) },
      ],
    };
    const bytes = encodeGguf(spec);
    const f = await readGguf(await file("round.gguf", bytes));
    expect(f.version).toBe(3);
    expect(f.fileSize).toBe(bytes.length);
    expect(f.alignment).toBe(32);
    expect(f.metadata).toMatchObject({
      "t.str": "héllo ✓",
      "t.u32": 4_000_000_000,
      "t.i32": -5,
      "t.u64": 2 ** 40,
      "t.big": 2n ** 63n,
      "t.f32": 0.25,
      "t.bool": true,
      "t.strs": ["a", "", "c"],
      "t.f32s": [1.5, -2],
      "t.i32s": { type: "array", itemType: 5, length: 2000 },
      "general.alignment": 32,
    });
    expect(f.tensors).toEqual([
      { name: "w", dims: [4, 3], type: 1, typeName: "F16", offset: 0, byteSize: 24 },
      { name: "n", dims: [5], type: 0, typeName: "F32", offset: 32, byteSize: 20 },
    ]);
    expect(f.dataOffset % 32).toBe(0);
    expect(f.dataOffset + 64).toBe(bytes.length);
  });

  it("keeps only the length of long string arrays", async () => {
    const f = await readGguf(basePath, { maxArrayValues: 100 });
    expect(f.metadata["tokenizer.ggml.tokens"]).toEqual({ type: "array", itemType: 8, length: 259 });
    const full = await readGguf(basePath);
    expect((full.metadata["tokenizer.ggml.tokens"] as string[]).slice(256)).toEqual([
      "<|im_start|>",
      "<|im_end|>",
      "<|endoftext|>",
    ]);
  });

  it("reads only the header of a huge model", async () => {
    const spec: GgufWriteSpec = {
      metadata: { "general.architecture": gv.str("llama") },
      tensors: [
        {
          name: "huge",
          dims: [1024, 1024 * 1024],
          type: "F16",
          data: () => {
            throw new Error("not generated");
          },
        },
      ],
    };
    const header = encodeGgufChunks(spec).next().value as Buffer;
    const path = await file("huge.gguf", header);
    await truncate(path, header.length + 2 * 1024 ** 3); // sparse: 2 GiB of zeros on paper
    // Counted, not timed: every byte the reader's file handle reads.
    const probe = await open(path, "r");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const read = Reflect.get(proto, "read") as (...a: unknown[]) => Promise<{ bytesRead: number }>;
    let bytesRead = 0;
    const spy = vi.spyOn(proto, "read").mockImplementation(async function (
      this: FileHandle,
      ...args: unknown[]
    ) {
      const result = await read.apply(this, args);
      bytesRead += result.bytesRead;
      return result as never;
    });
    try {
      const f = await readGguf(path);
      expect(f.tensors[0]!.byteSize).toBe(2 * 1024 ** 3);
    } finally {
      spy.mockRestore();
    }
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThanOrEqual(header.length + 1024 * 1024);
  });
});

describe("readGguf errors", () => {
  it("names a file that is not GGUF", async () => {
    const path = await file("model.bin", Buffer.from("PK\u0003\u0004 this is a zip file, not a model"));
    await expectGgufError(
      readGguf(path),
      "not_gguf",
      `"model.bin" is not a GGUF model file (it does not start with the GGUF signature).`,
    );
    await expectGgufError(readGguf(await file("tiny.txt", "hi")), "not_gguf", /not a GGUF model file/);
  });

  it("reports an empty file", async () => {
    await expectGgufError(
      readGguf(await file("empty.gguf", "")),
      "truncated",
      `"empty.gguf" is empty (0 bytes), so it is not a usable model file.`,
    );
  });

  it("reports a missing file and a folder", async () => {
    await expectGgufError(readGguf(join(dir.path, "nope.gguf")), "not_found", /^"nope.gguf" was not found/);
    await mkdir(join(dir.path, "folder.gguf"));
    await expectGgufError(
      readGguf(join(dir.path, "folder.gguf")),
      "not_found",
      `"folder.gguf" is a folder, not a model file.`,
    );
  });

  it("reports a file cut short in its data or in its header", async () => {
    const cut = await file("cut.gguf", baseBytes.subarray(0, baseBytes.length - 1000));
    await expectGgufError(
      readGguf(cut),
      "truncated",
      /^"cut.gguf" is incomplete: it is 4\d\d\.\d KB but its contents need 4\d\d\.\d KB/,
    );
    await expectGgufError(
      readGguf(await file("head.gguf", baseBytes.subarray(0, 300))),
      "truncated",
      /in the middle of its header/,
    );
    await expectGgufError(readGguf(await file("sig.gguf", "GGU")), "truncated", /is incomplete/);
  });

  it("rejects unsupported versions and byte orders", async () => {
    const v1 = Buffer.from(baseBytes);
    v1.writeUInt32LE(1, 4);
    await expectGgufError(readGguf(await file("v1.gguf", v1)), "unsupported_version", /GGUF version 1/);
    const v9 = Buffer.from(baseBytes);
    v9.writeUInt32LE(9, 4);
    await expectGgufError(
      readGguf(await file("v9.gguf", v9)),
      "unsupported_version",
      /version 9, and only versions 2 and 3/,
    );
    const be = Buffer.from(baseBytes);
    be.writeUInt32BE(3, 4);
    await expectGgufError(readGguf(await file("be.gguf", be)), "unsupported_version", /big-endian/);
  });

  it("accepts version 2", async () => {
    const v2 = Buffer.from(baseBytes);
    v2.writeUInt32LE(2, 4);
    expect((await readGguf(await file("v2.gguf", v2))).version).toBe(2);
  });

  it("rejects impossible counts, unknown tensor types and bad alignment", async () => {
    const many = Buffer.from(baseBytes);
    many.writeBigUInt64LE(2n ** 40n, 8);
    await expectGgufError(
      readGguf(await file("many.gguf", many)),
      "corrupt",
      /damaged GGUF file: it claims 1099511627776 tensors/,
    );

    const spec: GgufWriteSpec = {
      metadata: {},
      tensors: [{ name: "odd_tensor", dims: [2], type: "F32", data: new Float32Array(2) }],
    };
    const odd = encodeGguf(spec);
    const at = odd.indexOf("odd_tensor") + "odd_tensor".length + 4 + 8;
    odd.writeUInt32LE(99, at);
    await expectGgufError(
      readGguf(await file("odd.gguf", odd)),
      "corrupt",
      /tensor type 99, which this app does not know/,
    );

    const misaligned = encodeGguf({ ...spec, metadata: { "general.alignment": gv.u32(24) } });
    await expectGgufError(
      readGguf(await file("align.gguf", misaligned)),
      "corrupt",
      /alignment 24 is not a power of two/,
    );
  });
});

describe("model checks", () => {
  it("summarizes the demo model", async () => {
    const f = await assertLoadableModel(basePath);
    expect(classifyGguf(f)).toBe("model");
    expect(summarizeModel(f, basePath)).toEqual({
      path: basePath,
      name: TINY_MODEL_NAME,
      architecture: "llama",
      sizeBytes: baseBytes.length,
      contextLength: 4096,
      embeddingLength: 64,
      blockCount: 2,
      isDemo: true,
    });
  });

  it("names a model after its file when it has no general.name", async () => {
    const spec = tinyModelSpec("tiny");
    const { "general.name": _name, "macaron.demo": _demo, ...metadata } = spec.metadata;
    const path = await file("My-Model.Q4.gguf", encodeGguf({ ...spec, metadata }));
    expect(summarizeModel(await readGguf(path), path)).toMatchObject({ name: "My-Model.Q4", isDemo: false });
  });

  it("refuses a LoRA adapter or a file without an architecture as a base model", async () => {
    const adapter = await file("chat.gguf", encodeGguf(demoAdapterSpec("chat")));
    expect(classifyGguf(await readGguf(adapter))).toBe("adapter");
    await expectGgufError(
      assertLoadableModel(adapter),
      "not_a_model",
      `"chat.gguf" is a LoRA adapter, not a base model. Load a base model first, then add the adapter to it.`,
    );
    const bare = await file(
      "bare.gguf",
      encodeGguf({ metadata: { "general.name": gv.str("x") }, tensors: [] }),
    );
    await expectGgufError(assertLoadableModel(bare), "not_a_model", /does not say which model architecture/);
    const noShape = await file(
      "noshape.gguf",
      encodeGguf({ metadata: { "general.architecture": gv.str("llama") }, tensors: [] }),
    );
    await expectGgufError(
      assertLoadableModel(noShape),
      "not_a_model",
      /lacks its llama.embedding_length and llama.block_count/,
    );
  });

  it("checks that an adapter fits the base", async () => {
    const base = await readGguf(basePath);
    const good = await file("good.gguf", encodeGguf(demoAdapterSpec("coding")));
    expect((await assertAdapterFits(good, base)).tensors).toHaveLength(2);
    const wrong = await file("wrong.gguf", encodeGguf(wrongBaseAdapterSpec()));
    await expectGgufError(
      assertAdapterFits(wrong, base),
      "incompatible_adapter",
      /^"wrong.gguf" does not fit the loaded model: output.weight is \[64, 259\] in the model but \[96, 259\] in the adapter/,
    );
    await expectGgufError(
      assertAdapterFits(basePath, base),
      "incompatible_adapter",
      /"base.gguf" is not a LoRA adapter/,
    );
  });
});
