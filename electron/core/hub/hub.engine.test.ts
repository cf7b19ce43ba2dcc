/**
 * The hub with the real engine (node-llama-cpp): a split GGUF downloaded from the loopback hub
 * loads from its first part and generates; hub.fit reads a gated file's header remotely with
 * the stored token (GgufInsights' estimate).
 */
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateFit } from "../../../native/engine/fit-estimate";
import { GATED_REPO, SPLIT_REPO, type HubServer } from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";
import { testDir } from "../../../testing/core/temp-dir";
import { HubService } from "./hub-service";
import { ModelLibrary } from "./model-library";
import { FileTokenStore } from "./token-store";

let hub: HubServer;
let llama: Llama;

useTestHub((h) => (hub = h));

beforeAll(async () => {
  llama = await getLlama({
    gpu: false,
    maxThreads: 1,
    logLevel: LlamaLogLevel.error,
    logger: () => undefined,
  });
});

afterAll(async () => {
  await llama?.dispose();
});

function service(dataDir: string) {
  return new HubService({
    dataDir,
    endpoint: hub.url,
    tokenStore: new FileTokenStore(dataDir),
    emit: () => undefined,
    loadedModelPath: () => null,
    installAdapter: () => Promise.reject(new Error("unused")),
    fit: (source, options) => estimateFit(llama, null, { source, ...options }),
  });
}

describe("hub with the real engine", () => {
  it("downloads a split GGUF that node-llama-cpp loads from its first part", async () => {
    const dataDir = testDir("macaron-hub-engine-");
    const hubService = service(dataDir);
    const started = await hubService.download(SPLIT_REPO, "split-tiny-Q8_0-00001-of-00002.gguf");
    const done = await hubService.downloads.wait(started.id);
    expect(done.state).toBe("done");
    const model = await llama.loadModel({ modelPath: done.path });
    try {
      const context = await model.createContext({ contextSize: 256, threads: 1 });
      const sequence = context.getSequence();
      let n = 0;
      for await (const token of sequence.evaluate(model.tokenize("Hello"))) {
        expect(typeof token).toBe("number");
        if (++n >= 4) break;
      }
      expect(n).toBe(4);
      const [local] = await new ModelLibrary({ dataDir, loadedPath: () => null }).list();
      // Every part's tensors count: both halves of the model.
      expect(local).toMatchObject({ repo: SPLIT_REPO, architecture: "llama", sizeBytes: done.totalBytes });
      const elements = (model.fileInfo.fullTensorInfo ?? []).reduce(
        (sum, t) => sum + t.dimensions.reduce<number>((p, d) => p * Number(d), 1),
        0,
      );
      expect(local!.parameters).toBe(elements);
      expect(model.fileInfo.splicedParts).toBe(2);
      await context.dispose();
    } finally {
      await model.dispose();
    }
    await hubService.close();
  });

  it("estimates a gated hub file's fit from its remote header with the stored token", async () => {
    const dataDir = testDir("macaron-hub-engine-");
    const hubService = service(dataDir);
    await expect(hubService.fit({ repo: GATED_REPO, file: "gated-demo-Q8_0.gguf" })).rejects.toThrow(/gated/);
    await hubService.setToken(hub.token);
    const from = hub.requests.length;
    const fit = await hubService.fit({ repo: GATED_REPO, file: "gated-demo-Q8_0.gguf", contextSize: 1024 });
    expect(fit).toMatchObject({ contextSize: 1024, gpuLayers: 0 });
    expect(fit.ramBytes).toBeGreaterThan(0);
    expect(fit.totalLayers).toBeGreaterThan(0);
    const ranged = hub.requests.slice(from).filter((r) => r.range);
    expect(ranged.length).toBeGreaterThan(0);
    for (const r of ranged) expect(r.authorization).toBe(`Bearer ${hub.token}`);
    await hubService.close();
  });
});
