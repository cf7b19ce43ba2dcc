import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { FitEstimate, HubFile, RecommendedModel } from "../../../electron/api";
import {
  contextChoices,
  defaultFile,
  describeDownload,
  describeFit,
  downloadAnnouncement,
  downloadFor,
  downloadPercent,
  downloadsSummary,
  draftFromSettings,
  fitInputFromDraft,
  formatEta,
  formatParameters,
  formatSpeed,
  groupByTier,
  hubErrorKind,
  localModelFor,
  modelFiles,
  settingsFromDraft,
  upsertDownload,
} from "./hub-logic";
import { download, fitEstimate, hubFile, localModel } from "../testing/hub-fixtures";

const GB = 1024 ** 3;

describe("formatting", () => {
  it("reads sizes, speeds, times and parameter counts like a person would", () => {
    expect(formatSpeed(12.3 * 1024 * 1024)).toBe("12.3 MB/s");
    expect(formatSpeed(0)).toBe("—");
    expect(formatEta(null)).toBeNull();
    expect(formatEta(44.6)).toBe("45 s left");
    expect(formatEta(185)).toBe("3 min left");
    expect(formatEta(3900)).toBe("1 h 5 min left");
    expect(formatEta(7200)).toBe("2 h left");
    expect(formatParameters(1_540_000_000)).toBe("1.5B");
    expect(formatParameters(85_000_000)).toBe("85M");
    expect(formatParameters(700_000)).toBe("700K");
  });
});

describe("downloads", () => {
  it("describes each state in a line", () => {
    const d = download({
      state: "downloading",
      downloadedBytes: GB,
      totalBytes: 4 * GB,
      bytesPerSecond: 2 * 1024 ** 2,
      etaSeconds: 1536,
    });
    expect(describeDownload(d)).toBe("1 GB of 4 GB · 2 MB/s · 26 min left");
    expect(downloadPercent(d)).toBe(25);
    expect(describeDownload({ ...d, state: "paused" })).toBe("Paused at 1 GB of 4 GB");
    expect(describeDownload({ ...d, state: "error", error: "HTTP 429" })).toBe("Failed: HTTP 429");
    expect(describeDownload({ ...d, state: "done" })).toBe("Downloaded (4 GB)");
    expect(downloadPercent({ ...d, state: "done" })).toBe(100);
    expect(downloadPercent({ ...d, totalBytes: 0 })).toBeNull();
  });

  it("says an unverified download was not checked and shows the sha256 it arrived with", () => {
    const d = download({
      repo: "o/m",
      file: "m-Q4_K_M.gguf",
      state: "unverified",
      downloadedBytes: 4 * GB,
      totalBytes: 4 * GB,
      unverified: [{ file: "m-Q4_K_M.gguf", sha256: "ab".repeat(32) }],
    });
    expect(describeDownload(d)).toBe(
      `Downloaded (4 GB), but not checked: the hub lists no sha256 for it, so a damaged or altered file cannot be told apart. Keep it only if you trust o/m. (m-Q4_K_M.gguf sha256 ${"ab".repeat(32)})`,
    );
    expect(downloadAnnouncement(d)).toBe("m-Q4_K_M.gguf downloaded but not checked: keep it or discard it");
  });

  it("announces progress in 10 % steps, not every event", () => {
    const d = download({
      state: "downloading",
      downloadedBytes: 37,
      totalBytes: 100,
      file: "m/Model-Q4_K_M.gguf",
    });
    expect(downloadAnnouncement(d)).toBe("Downloading Model-Q4_K_M.gguf: 30%");
    expect(downloadAnnouncement({ ...d, downloadedBytes: 39 })).toBe(downloadAnnouncement(d));
    expect(downloadAnnouncement({ ...d, state: "done" })).toBe("Model-Q4_K_M.gguf downloaded");
  });

  it("keeps one entry per id, newest first, and finds a file's download", () => {
    const a = download({ id: "a", startedAt: 1 });
    const b = download({ id: "b", startedAt: 2, file: "other.gguf" });
    const list = upsertDownload(upsertDownload([], a), b);
    expect(list.map((d) => d.id)).toEqual(["b", "a"]);
    const updated = upsertDownload(list, { ...a, downloadedBytes: 50 });
    expect(updated).toHaveLength(2);
    expect(updated.find((d) => d.id === "a")?.downloadedBytes).toBe(50);
    expect(downloadFor(updated, a.repo, a.file)?.id).toBe("a");
    expect(downloadFor([{ ...a, state: "cancelled" }], a.repo, a.file)).toBeNull();
  });

  it("sums the running downloads for the header", () => {
    expect(downloadsSummary([download({ state: "done" })])).toBeNull();
    expect(
      downloadsSummary([
        download({ id: "a", state: "downloading", downloadedBytes: 10, totalBytes: 100 }),
        download({ id: "b", state: "paused", downloadedBytes: 40, totalBytes: 100 }),
      ]),
    ).toEqual({ count: 2, percent: 25, label: "2 downloads 25%" });
    expect(downloadsSummary([download({ state: "paused", downloadedBytes: 50 })])?.label).toBe(
      "Download paused 50%",
    );
  });
});

describe("repo files", () => {
  const files: HubFile[] = [
    hubFile("m-Q8_0.gguf", "Q8_0", 8),
    hubFile("m-Q4_K_M.gguf", "Q4_K_M", 4),
    hubFile("m-F16.gguf", "F16", 16),
    { ...hubFile("lora.gguf", null, 1), isAdapter: true },
  ];

  it("lists model files smallest first, without adapters", () => {
    expect(modelFiles({ repo: "o/m", gated: false, baseModel: null, files }).map((f) => f.quant)).toEqual([
      "Q4_K_M",
      "Q8_0",
      "F16",
    ]);
  });

  it("offers the recommended quantization, else Q4_K_M, else the smallest", () => {
    expect(defaultFile(files, "q8_0")?.quant).toBe("Q8_0");
    expect(defaultFile(files, "Q2_K")?.quant).toBe("Q4_K_M");
    expect(defaultFile([hubFile("a.gguf", "F32", 9), hubFile("b.gguf", "F16", 3)], null)?.path).toBe(
      "a.gguf",
    );
    expect(defaultFile([], null)).toBeNull();
  });

  it("finds the downloaded copy of a repo file", () => {
    const locals = [localModel({ fileName: "m-Q4_K_M.gguf", repo: "o/m" })];
    expect(localModelFor(locals, "o/m", "sub/m-Q4_K_M.gguf")).not.toBeNull();
    expect(localModelFor(locals, "x/y", "m-Q4_K_M.gguf")).toBeNull();
    expect(localModelFor(null, "o/m", "m-Q4_K_M.gguf")).toBeNull();
  });

  it("groups the recommended list by tier, small first", () => {
    const rec = (repo: string, tier: RecommendedModel["tier"]): RecommendedModel => ({
      repo,
      tier,
      quant: "Q4_K_M",
      label: repo,
      approxSizeBytes: 1,
      note: "",
    });
    expect(
      groupByTier([rec("t/a", "tall"), rec("s/a", "small"), rec("s/b", "small")]).map(([t, m]) => [
        t,
        m.length,
      ]),
    ).toEqual([
      ["small", 2],
      ["tall", 1],
    ]);
  });
});

describe("hub errors", () => {
  it("tells a gated repo, a missing one, a rate limit and the network apart", () => {
    expect(hubErrorKind(new ApiError("unauthorized", "Sign in"))).toBe("token");
    expect(hubErrorKind(new ApiError("internal", "This repo is gated (HTTP 403)"))).toBe("token");
    expect(hubErrorKind(new ApiError("not_found", "No such repo"))).toBe("not_found");
    expect(hubErrorKind(new ApiError("internal", "The hub answered 429 Too Many Requests"))).toBe(
      "rate_limited",
    );
    expect(hubErrorKind(new ApiError("internal", "fetch failed: ECONNREFUSED"))).toBe("network");
    expect(hubErrorKind(new Error("odd"))).toBe("other");
  });
});

describe("fit in plain words", () => {
  it("says whether it fits, how much RAM and VRAM it takes and how much context fits", () => {
    const cpu = describeFit(
      fitEstimate({
        ramBytes: 3 * GB,
        fits: true,
        contextSize: 4096,
        maxContextSize: 32768,
        trainContextSize: 32768,
      }),
    );
    expect(cpu.verdict).toBe("Fits this machine");
    expect(cpu.ram).toBe("Needs 3 GB of RAM — this machine has 16 GB (8 GB free)");
    expect(cpu.gpu).toBe("No GPU found: runs on the CPU.");
    expect(cpu.context).toBe("Context 4,096 tokens (up to 32,768 fits here; trained for 32,768)");
    const fit: FitEstimate = fitEstimate({ fits: false, gpuLayers: 20, totalLayers: 32, vramBytes: 6 * GB });
    fit.machine = { ...fit.machine, vramTotalBytes: 8 * GB, vramFreeBytes: 7 * GB, gpu: "cuda" };
    const gpu = describeFit(fit);
    expect(gpu.verdict).toBe("Does not fit this machine");
    expect(gpu.gpu).toBe("20 of 32 layers on the GPU (cuda): needs 6 GB of 8 GB VRAM (7 GB free)");
  });

  it("offers context sizes up to the training context", () => {
    expect(contextChoices(10000)).toEqual([2048, 4096, 8192, 10000]);
    expect(contextChoices(512)).toEqual([512]);
  });
});

describe("load settings form", () => {
  const limits = { maxContext: 32768, totalLayers: 28 };

  it("round-trips settings through the form's fields", () => {
    const s = {
      contextSize: 8192,
      gpuLayers: 12,
      flashAttention: "on" as const,
      kvCacheType: "q8_0" as const,
      batchSize: null,
      threads: 3,
    };
    expect(settingsFromDraft(draftFromSettings(s), limits)).toEqual({ ok: true, settings: s });
    const auto = { ...s, contextSize: null, gpuLayers: "auto" as const };
    expect(draftFromSettings(auto)).toMatchObject({ contextSize: "", gpuMode: "auto" });
    expect(settingsFromDraft(draftFromSettings(auto), limits)).toEqual({ ok: true, settings: auto });
  });

  it("names the wrong field: context over the training context, layers over the model's", () => {
    const d = draftFromSettings({
      contextSize: null,
      gpuLayers: "max",
      flashAttention: "auto",
      kvCacheType: "f16",
      batchSize: null,
      threads: null,
    });
    expect(settingsFromDraft({ ...d, contextSize: "65536" }, limits)).toEqual({
      ok: false,
      field: "contextSize",
      error: "Context size must be between 256 and 32,768.",
    });
    expect(settingsFromDraft({ ...d, gpuMode: "custom", gpuLayers: "40" }, limits)).toMatchObject({
      ok: false,
      field: "gpuLayers",
    });
    expect(settingsFromDraft({ ...d, gpuMode: "custom", gpuLayers: "" }, limits)).toMatchObject({
      ok: false,
      field: "gpuLayers",
    });
    expect(settingsFromDraft({ ...d, threads: "two" }, limits)).toMatchObject({
      ok: false,
      field: "threads",
    });
  });

  it("asks the fit estimate only for what the form says", () => {
    const d = draftFromSettings({
      contextSize: 4096,
      gpuLayers: 5,
      flashAttention: "auto",
      kvCacheType: "f16",
      batchSize: null,
      threads: null,
    });
    expect(fitInputFromDraft(d)).toEqual({ contextSize: 4096, gpuLayers: 5 });
    expect(fitInputFromDraft({ ...d, contextSize: "12", gpuMode: "max" })).toEqual({ gpuLayers: "max" });
  });
});
