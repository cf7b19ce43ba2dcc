import { describe, expect, it } from "vitest";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { estimateFit } from "../../../native/engine/fit-estimate";
import { loadLlamaBackend } from "../../../native/engine/llama-backend";
import type { FitResult } from "../engine/types";
import { matchProfile, pickContext, TALL_BASE_PROFILE, type FitWith, type ModelFacts } from "./profiles";
import { testDir } from "../../../testing/core/temp-dir";

const GB = 1e9;

const qwenMoe: ModelFacts = {
  architecture: "qwen3moe",
  name: "Tall base",
  parameters: 50e9,
  fileBytes: 29 * GB,
  expertCount: 128,
  expertUsedCount: 8,
};

/** A fit of the Tall base with `max` tokens of context fitting (the sequences a load allocates). */
function fit(max: number, machine: Partial<FitResult["machine"]> = {}, gpuLayers = 0): FitResult {
  return {
    contextSize: Math.min(8192, max),
    gpuLayers,
    totalLayers: 49,
    ramBytes: 30 * GB,
    vramBytes: 0,
    maxContextSize: max,
    trainContextSize: 40_960,
    machine: {
      ramTotalBytes: 64 * GB,
      ramFreeBytes: 60 * GB,
      vramTotalBytes: 0,
      vramFreeBytes: 0,
      gpu: null,
      cpuCores: 16,
      ...machine,
    },
    fits: max > 0,
    summary: "Fits: 30 GB of 60 GB free RAM",
    model: qwenMoe,
  };
}

/** fitWith answering per KV type; records what it was asked. */
function fits(byKv: { f16?: FitResult; q8_0?: FitResult }, asked: unknown[] = []): FitWith {
  return (options) => {
    asked.push(options);
    const result = byKv[options.kvCacheType as "f16" | "q8_0"];
    if (!result) throw new Error(`unexpected fit ${JSON.stringify(options)}`);
    return Promise.resolve(result);
  };
}

describe("the Tall base profile: matching", () => {
  it("matches Qwen mixture-of-experts GGUFs by architecture and experts", () => {
    expect(matchProfile(qwenMoe)?.id).toBe("tall-base");
    expect(matchProfile({ ...qwenMoe, architecture: "qwen2moe" })?.id).toBe("tall-base");
    // The tiny fixture's shape: 2 of 4 experts, a few thousand parameters.
    expect(matchProfile({ ...qwenMoe, parameters: 60_000, expertCount: 4, expertUsedCount: 2 })?.id).toBe(
      "tall-base",
    );
  });

  it("does not match dense Qwen, llama, or a qwen3moe header without real experts", () => {
    expect(
      matchProfile({ ...qwenMoe, architecture: "qwen3", expertCount: null, expertUsedCount: null }),
    ).toBeNull();
    expect(matchProfile({ ...qwenMoe, architecture: "llama" })).toBeNull();
    expect(matchProfile({ ...qwenMoe, expertCount: null })).toBeNull();
    expect(matchProfile({ ...qwenMoe, expertCount: 1, expertUsedCount: 1 })).toBeNull();
    expect(matchProfile({ ...qwenMoe, expertUsedCount: 128 })).toBeNull();
  });
});

describe("the Tall base profile: defaults for this machine", () => {
  it("plenty of RAM, no GPU: 32k context, f16 KV, flash attention on, every layer on CPU", async () => {
    const { profile, defaults } = await TALL_BASE_PROFILE.resolve(fit(40_960), fits({}));
    expect(defaults).toEqual({
      contextSize: 32_768,
      gpuLayers: "auto",
      flashAttention: "on",
      kvCacheType: "f16",
      batchSize: null,
      threads: null,
    });
    expect(profile.id).toBe("tall-base");
    expect(profile.defaults).toEqual(defaults);
    expect(profile.hardware).toMatch(/29 GB/);
    expect(profile.hardware).toMatch(/50\.0B parameters, 8 of 128 experts per token/);
    expect(profile.notes.join(" ")).toMatch(/does not expose llama\.cpp's tensor buffer overrides/);
    expect(profile.notes.join(" ")).toMatch(/No GPU here/);
  });

  it("16k fits in f16: 16k, f16", async () => {
    const { defaults } = await TALL_BASE_PROFILE.resolve(fit(20_000), fits({}));
    expect(defaults).toMatchObject({ contextSize: 16_384, kvCacheType: "f16" });
  });

  it("memory short for 16k in f16: a q8_0 KV cache when it buys a longer context", async () => {
    const asked: unknown[] = [];
    const { defaults, profile } = await TALL_BASE_PROFILE.resolve(
      fit(9_000),
      fits({ q8_0: fit(18_000) }, asked),
    );
    expect(defaults).toMatchObject({ contextSize: 16_384, kvCacheType: "q8_0", flashAttention: "on" });
    expect(asked).toEqual([{ kvCacheType: "q8_0" }]);
    expect(profile.notes.join(" ")).toMatch(/q8_0 \(half the size\) gives 16384 tokens/);
  });

  it("q8_0 buys nothing: stays f16 at 8k", async () => {
    const { defaults } = await TALL_BASE_PROFILE.resolve(fit(9_000), fits({ q8_0: fit(12_000) }));
    expect(defaults).toMatchObject({ contextSize: 8_192, kvCacheType: "f16" });
  });

  it("nothing fits: 8k with q8_0, and the user is told", async () => {
    const { defaults, profile } = await TALL_BASE_PROFILE.resolve(fit(0), fits({ q8_0: fit(4_000) }));
    expect(defaults).toMatchObject({ contextSize: 8_192, kvCacheType: "q8_0" });
    expect(profile.notes.join(" ")).toMatch(/Even 8192 tokens do not fit/);
  });

  it("a GPU too small for the model: the GPU layers the fit estimate gives for the chosen context", async () => {
    const gpu = { vramTotalBytes: 24 * GB, vramFreeBytes: 23 * GB, gpu: "cuda: RTX 4090" };
    const asked: unknown[] = [];
    const { defaults, profile } = await TALL_BASE_PROFILE.resolve(
      fit(40_960, gpu, 18),
      fits({ f16: fit(40_960, gpu, 17) }, asked),
    );
    expect(defaults).toMatchObject({ contextSize: 32_768, gpuLayers: 17, kvCacheType: "f16" });
    expect(asked).toEqual([{ kvCacheType: "f16", contextSize: 32_768 }]);
    expect(profile.notes.join(" ")).toMatch(/17 of 49 layers fit the GPU/);
  });

  it("a GPU that holds every layer: max", async () => {
    const gpu = { vramTotalBytes: 141 * GB, vramFreeBytes: 140 * GB, gpu: "cuda: H200" };
    const { defaults } = await TALL_BASE_PROFILE.resolve(
      fit(40_960, gpu, 49),
      fits({ f16: fit(40_960, gpu, 49) }),
    );
    expect(defaults.gpuLayers).toBe("max");
  });

  it("trained on less than 8k: its training context, f16, no claim that memory is short", async () => {
    const short = { ...fit(4096), trainContextSize: 4096 };
    const { defaults, profile } = await TALL_BASE_PROFILE.resolve(short, fits({}));
    expect(defaults).toMatchObject({ contextSize: 4096, kvCacheType: "f16" });
    expect(profile.notes.join(" ")).toMatch(/trained on 4096 tokens/);
    expect(profile.notes.join(" ")).not.toMatch(/do not fit|Memory is short/);
  });

  it("head sizes a quantized KV cache cannot take stay f16, also when memory is short", async () => {
    const odd = { ...fit(0), model: { ...qwenMoe, headSize: 16 } };
    const asked: unknown[] = [];
    const { defaults } = await TALL_BASE_PROFILE.resolve(odd, fits({}, asked));
    expect(defaults.kvCacheType).toBe("f16");
    expect(asked).toEqual([]);
  });

  it("never more context than the model was trained on", () => {
    expect(pickContext(100_000, 16_384)).toBe(16_384);
    expect(pickContext(100_000, 4_096)).toBeNull();
  });
});

describe("the Tall base profile on the tiny qwen3moe fixture (real GGUF header)", () => {
  it("matches the qwen3moe base and not the dense qwen3 or llama ones", async () => {
    const dir = testDir("macaron-profiles-");
    const moe = await writeFixtures(dir, { architecture: "qwen3moe" });
    const dense = await writeFixtures(dir, { architecture: "qwen3" });
    const llama = await writeFixtures(dir);
    const backend = await loadLlamaBackend(1);
    const facts = async (path: string) =>
      (await estimateFit(backend.llama, null, { source: { path } })).model;
    const moeFacts = await facts(moe.basePath);
    expect(moeFacts).toMatchObject({ architecture: "qwen3moe", expertCount: 4, expertUsedCount: 2 });
    expect(matchProfile(moeFacts)?.id).toBe("tall-base");
    expect(matchProfile(await facts(dense.basePath))).toBeNull();
    expect(matchProfile(await facts(llama.basePath))).toBeNull();
    const estimate = await estimateFit(backend.llama, null, { source: { path: moe.basePath } });
    const { defaults } = await TALL_BASE_PROFILE.resolve(estimate, (options) =>
      estimateFit(backend.llama, null, { source: { path: moe.basePath }, ...options }),
    );
    // The fixture's training context is short: the profile never asks for more.
    expect(defaults.contextSize).toBeLessThanOrEqual(estimate.trainContextSize);
    expect(defaults.flashAttention).toBe("on");
  });
});
