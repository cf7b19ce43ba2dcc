import { describe, expect, it } from "vitest";
import { encodeGguf, gv, toHalf, GGUF_ALIGNMENT, type GgufWriteSpec } from "./writer";
import { tinyModelSpec } from "./tiny-model";

describe("toHalf", () => {
  it.each([
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff],
    [1e6, 0x7c00],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
    [2 ** -24, 0x0001],
    [2 ** -14, 0x0400],
    [1 + 2 ** -11, 0x3c00], // halfway between 1 and the next half: rounds to even
    [1 + 3 * 2 ** -11, 0x3c02], // halfway, rounds up to even
    [1 / 3, 0x3555],
  ])("%d → %s", (value, bits) => {
    expect(toHalf(value)).toBe(bits);
  });

  it("keeps NaN a NaN", () => {
    const h = toHalf(Number.NaN);
    expect(h & 0x7c00).toBe(0x7c00);
    expect(h & 0x3ff).not.toBe(0);
  });
});

describe("encodeGguf", () => {
  const spec: GgufWriteSpec = {
    metadata: { "general.architecture": gv.str("llama"), "x.count": gv.u32(7) },
    tensors: [
      { name: "a", dims: [3], type: "F32", data: new Float32Array([1, 2, 3]) },
      { name: "b", dims: [2, 2], type: "F16", data: () => new Float32Array([1, -2, 0.5, 0]) },
    ],
  };

  it("starts with the GGUF signature and version 3, and pads the data to the alignment", () => {
    const bytes = encodeGguf(spec);
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("GGUF");
    expect(bytes.readUInt32LE(4)).toBe(3);
    expect(bytes.readBigUInt64LE(8)).toBe(2n);
    expect(bytes.readBigUInt64LE(16)).toBe(3n); // two keys + general.alignment
    // a: 12 bytes padded to 32, b: 8 bytes padded to 32.
    expect(bytes.length % GGUF_ALIGNMENT).toBe(0);
    const dataStart = bytes.length - 64;
    expect(bytes.readFloatLE(dataStart + 8)).toBe(3);
    expect(bytes.readUInt16LE(dataStart + 32 + 2)).toBe(0xc000);
  });

  it("gives identical bytes for identical input", () => {
    expect(encodeGguf(spec).equals(encodeGguf(spec))).toBe(true);
    expect(encodeGguf(tinyModelSpec("tiny")).equals(encodeGguf(tinyModelSpec("tiny")))).toBe(true);
  });

  it("rejects data that does not match the dims", () => {
    expect(() =>
      encodeGguf({
        metadata: {},
        tensors: [{ name: "x", dims: [4], type: "F32", data: new Float32Array(3) }],
      }),
    ).toThrow(/3 values for dims \[4\]/);
  });
});
