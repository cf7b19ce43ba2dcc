import { describe, expect, it } from "vitest";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { defaultContextSize, fitSummary, weightBytes } from "./fit-estimate";
import { writeGguf } from "../gguf/writer";
import { tinyModelSpec } from "../gguf/tiny-model";
import { writeSplitGguf } from "../../testing/hub/hf-hub-server";
import { testDir } from "../../testing/core/temp-dir";
import { kvCacheTypes, resolveFlashAttention } from "./llama-backend";

const GB = 1e9;
const machine = { ramFreeBytes: 16 * GB, vramFreeBytes: 0 };

describe("fit estimate helpers", () => {
  it("the default context: the training context up to 8k", () => {
    expect(defaultContextSize(4096)).toBe(4096);
    expect(defaultContextSize(131_072)).toBe(8192);
  });

  it("one line for the user, fitting or not", () => {
    expect(fitSummary({ fits: true, ramBytes: 3.1 * GB, vramBytes: 0, machine })).toBe(
      "Fits: 3.1 GB of 16 GB free RAM",
    );
    expect(fitSummary({ fits: false, ramBytes: 41 * GB, vramBytes: 0, machine })).toBe(
      "Needs 41 GB RAM, this machine has 16 GB free",
    );
    expect(
      fitSummary({
        fits: false,
        ramBytes: 2 * GB,
        vramBytes: 30 * GB,
        machine: { ramFreeBytes: 16 * GB, vramFreeBytes: 23.5 * GB },
      }),
    ).toBe("Needs 30 GB VRAM, the GPU has 24 GB free");
    expect(
      fitSummary({
        fits: true,
        ramBytes: 2 * GB,
        vramBytes: 5 * GB,
        machine: { ramFreeBytes: 16 * GB, vramFreeBytes: 23.5 * GB },
      }),
    ).toBe("Fits: 2.0 GB of 16 GB free RAM, 5.0 GB of 24 GB free VRAM");
  });

  it("flash attention and KV types: a quantized V cache only with flash attention", () => {
    expect(resolveFlashAttention(undefined, "f16", null, {})).toBe(false);
    expect(resolveFlashAttention("auto", "q8_0", null, {})).toBe(true);
    expect(resolveFlashAttention("off", "q8_0", null, {})).toBe(false);
    expect(resolveFlashAttention("auto", "f16", "cuda", {})).toBe("auto");
    expect(resolveFlashAttention("on", "f16", null, {})).toBe(true);
    expect(kvCacheTypes("q4_0", true)).toEqual({ key: "Q4_0", value: "Q4_0" });
    expect(kvCacheTypes("q8_0", false)).toEqual({ key: "Q8_0", value: "F16" });
    expect(kvCacheTypes("f16", "auto")).toEqual({ key: "F16", value: "F16" });
  });
});

describe("weightBytes", () => {
  it("counts every part of a split model from its first part, and 0 for a file that is not a GGUF", async () => {
    const dir = testDir("macaron-weight-bytes-");
    const spec = tinyModelSpec("small");
    const single = join(dir, "single.gguf");
    await writeGguf(single, spec);
    const parts = await writeSplitGguf(join(dir, "split"), spec, 3);
    const whole = await weightBytes(single);
    expect(whole).toBeGreaterThan(0);
    expect(await weightBytes(parts[0]!)).toBe(whole);
    expect((await stat(parts[0]!)).size).toBeLessThan(whole / 2);
    const junk = join(dir, "junk.gguf");
    await writeFile(junk, "not a model");
    expect(await weightBytes(junk)).toBe(0);
  });
});
