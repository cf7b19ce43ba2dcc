import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import type { EngineInfo, EngineMessage, FitResult, LoadedModel } from "../../common/engine-protocol";
import { EngineRuntime } from "./runtime";
import { DEFAULT_SEQUENCES } from "./fit-estimate";
import { suiteDir } from "../../testing/core/temp-dir";

// Load settings and the fit estimate on the real engine (in process), on the tiny fixture.
const dir = suiteDir("macaron-load-settings-");
let fx: FixturePaths;
/** The small fixture: its 64-wide attention heads take a q8_0 KV cache (the tiny one's 16 do not). */
let small: FixturePaths;
let backend: Promise<LlamaBackend>;
let runtime: EngineRuntime;
let sent: EngineMessage[] = [];
let nextId = 1;

async function call<T>(
  request: Record<string, unknown>,
): Promise<{ value?: T; error?: string; progress: number[] }> {
  const id = nextId++;
  sent = [];
  await runtime.handle({ id, ...request });
  const progress = sent.flatMap((m) => (m.type === "progress" && m.id === id ? [m.progress] : []));
  const last = sent.find((m) => "id" in m && m.id === id && (m.type === "result" || m.type === "error"));
  if (last?.type === "result") return { value: last.value as T, progress };
  return { error: last?.type === "error" ? last.message : "no reply", progress };
}

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  small = await writeFixtures(dir.path, { size: "small" });
  backend = loadLlamaBackend(1);
  runtime = new EngineRuntime(
    (m) => sent.push(m),
    () => backend,
  );
});

afterAll(async () => {
  await runtime.dispose();
});

describe("load settings (real engine)", () => {
  it("loads with the engine's defaults: the training context (4k here), DEFAULT_SEQUENCES, flash attention off on CPU", async () => {
    const { value, progress } = await call<LoadedModel>({ type: "load", path: fx.basePath });
    expect(value?.settings).toEqual({
      contextSize: 4096,
      sequences: DEFAULT_SEQUENCES,
      gpuLayers: 0,
      totalLayers: 3,
      flashAttention: "off",
      kvCacheType: "f16",
      batchSize: expect.any(Number) as number,
      threads: 1,
      // A small model on the CPU is read into memory (llama-backend.ts, weightsInMemory).
      mmap: false,
    });
    expect(value?.contextSize).toBe(4096);
    expect(value?.trainContextSize).toBe(4096);
    // Progress never goes back, covers the context creation, and reads 1 only at the end.
    expect(progress.length).toBeGreaterThan(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(1);
    expect(progress.filter((p) => p === 1)).toHaveLength(1);
    expect(progress.at(-2)).toBeGreaterThan(0.85);
  });

  it("takes context size, KV cache type, flash attention, batch size and threads, and reports what it used", async () => {
    const { value } = await call<LoadedModel>({
      type: "load",
      path: small.basePath,
      contextSize: 1024,
      kvCacheType: "q8_0",
      batchSize: 128,
      threads: 2,
    });
    expect(value?.settings).toMatchObject({
      contextSize: 1024,
      kvCacheType: "q8_0",
      // A quantized V cache needs flash attention: "auto" turns it on for q8_0.
      flashAttention: "on",
      batchSize: 128,
      threads: 2,
    });
    const answer = await call<{ contextSize: number; contextTokens: number; text: string }>({
      type: "generate",
      history: [{ role: "user", text: "hello" }],
      options: { temperature: 0, maxTokens: 4 },
    });
    expect(answer.value?.contextSize).toBe(1024);
    expect(answer.value?.contextTokens).toBeGreaterThan(0);
  });

  it("reads a small model into memory or maps it (MACARON_ENGINE_MMAP=on): the same greedy answer", async () => {
    const answers: Record<string, string | undefined> = {};
    for (const setting of ["auto", "on"]) {
      if (setting === "on") process.env.MACARON_ENGINE_MMAP = "on";
      try {
        const { value } = await call<LoadedModel>({ type: "load", path: fx.basePath, sequences: 1 });
        expect(value?.settings?.mmap).toBe(setting === "on");
        // What llama.cpp did, not only what it reports: the file is mapped into this process or not.
        if (process.platform === "linux")
          expect(readFileSync("/proc/self/maps", "utf8").includes(fx.basePath)).toBe(setting === "on");
      } finally {
        delete process.env.MACARON_ENGINE_MMAP;
      }
      const answer = await call<{ text: string }>({
        type: "generate",
        history: [{ role: "user", text: "Name three colours." }],
        options: { temperature: 0, maxTokens: 24 },
      });
      answers[setting] = answer.value?.text;
    }
    expect(answers.auto?.length).toBeGreaterThan(0);
    expect(answers.on).toBe(answers.auto);
  });

  it("says why a quantized KV cache does not fit a model", async () => {
    const { error } = await call({ type: "load", path: fx.basePath, kvCacheType: "q8_0" });
    expect(error).toMatch(/multiple of 32; this model's are 16\. Use the f16 KV cache/);
  });

  it("caps the context at the training context", async () => {
    const { value } = await call<LoadedModel>({
      type: "load",
      path: fx.basePath,
      contextSize: 100_000,
      sequences: 1,
    });
    expect(value?.contextSize).toBe(4096);
    expect(value?.settings?.sequences).toBe(1);
  });

  it("refuses settings out of range before loading anything", async () => {
    const { error } = await call({ type: "load", path: fx.basePath, kvCacheType: "q2_k" });
    expect(error).toMatch(/kvCacheType/);
    const bad = await call({ type: "load", path: fx.basePath, gpuLayers: -1 });
    expect(bad.error).toMatch(/gpuLayers/);
  });
});

describe("fit estimate (real engine)", () => {
  it("estimates a local model for a context on this machine", async () => {
    const { value } = await call<FitResult>({
      type: "fit",
      source: { path: fx.basePath },
      contextSize: 2048,
    });
    expect(value).toMatchObject({
      contextSize: 2048,
      gpuLayers: 0,
      totalLayers: 3,
      trainContextSize: 4096,
      maxContextSize: 4096,
      vramBytes: 0,
      fits: true,
      model: { architecture: "llama", expertCount: null, expertUsedCount: null },
    });
    expect(value!.ramBytes).toBeGreaterThan(0);
    expect(value!.machine.ramTotalBytes).toBeGreaterThan(value!.machine.ramFreeBytes);
    expect(value!.machine.cpuCores).toBeGreaterThan(0);
    expect(value!.summary).toMatch(/^Fits: /);
    // A larger context needs more memory; without one, the default a load would pick.
    const larger = await call<FitResult>({ type: "fit", source: { path: fx.basePath }, contextSize: 4096 });
    expect(larger.value!.ramBytes).toBeGreaterThan(value!.ramBytes);
    const byDefault = await call<FitResult>({ type: "fit", source: { path: fx.basePath } });
    expect(byDefault.value!.contextSize).toBe(4096);
    const f16 = await call<FitResult>({ type: "fit", source: { path: small.basePath }, contextSize: 4096 });
    const q8 = await call<FitResult>({
      type: "fit",
      source: { path: small.basePath },
      contextSize: 4096,
      kvCacheType: "q8_0",
      flashAttention: "on",
    });
    const f16fa = await call<FitResult>({
      type: "fit",
      source: { path: small.basePath },
      contextSize: 4096,
      flashAttention: "on",
    });
    expect(q8.value!.ramBytes).toBeLessThan(f16fa.value!.ramBytes);
    expect(f16fa.value!.ramBytes).toBeLessThan(f16.value!.ramBytes);
  });

  it("answers a clear error for a file that is not a model, and keeps working", async () => {
    const notModel = join(dir.path, "notes.gguf");
    await writeFile(notModel, "not a model at all");
    const { error } = await call({ type: "fit", source: { path: notModel } });
    expect(error).toMatch(/Could not read the model file .*notes\.gguf/);
    const again = await call<FitResult>({ type: "fit", source: { path: fx.basePath } });
    expect(again.value?.fits).toBe(true);
  });

  it("estimates a remote model from its header only, with the fetch headers given (the hub's fit)", async () => {
    const bytes = await readFile(small.basePath);
    const seen: IncomingHttpHeaders[] = [];
    let served = 0;
    const server = createServer((req, res) => {
      seen.push(req.headers);
      const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? "");
      const start = range ? Number(range[1]) : 0;
      const end = range && range[2] ? Math.min(Number(range[2]), bytes.length - 1) : bytes.length - 1;
      served += end - start + 1;
      res.writeHead(range ? 206 : 200, {
        "content-length": end - start + 1,
        "accept-ranges": "bytes",
        ...(range ? { "content-range": `bytes ${start}-${end}/${bytes.length}` } : {}),
      });
      res.end(bytes.subarray(start, end + 1));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/owner/repo/resolve/main/base-small.gguf`;
      const remote = await call<FitResult>({
        type: "fit",
        source: { url, headers: { authorization: "Bearer hf_test" } },
        contextSize: 2048,
      });
      const local = await call<FitResult>({
        type: "fit",
        source: { path: small.basePath },
        contextSize: 2048,
      });
      expect(remote.error).toBeUndefined();
      expect(remote.value).toMatchObject({
        contextSize: 2048,
        totalLayers: local.value!.totalLayers,
        trainContextSize: 4096,
        model: { architecture: "llama", parameters: local.value!.model.parameters },
      });
      // Same weights and KV estimate as from the file on disk (within the simulator's rounding).
      expect(Math.abs(remote.value!.ramBytes - local.value!.ramBytes) / local.value!.ramBytes).toBeLessThan(
        0.05,
      );
      expect(seen.every((h) => h.authorization === "Bearer hf_test")).toBe(true);
      expect(served).toBeLessThan(bytes.length);
    } finally {
      server.close();
    }
  });

  it("says which llama.cpp binaries it runs", async () => {
    const { value } = await call<EngineInfo>({ type: "info" });
    expect(["prebuilt", "localBuild"]).toContain(value?.buildType);
    expect(value?.llamaCpp).toMatch(/@/);
  });
});
