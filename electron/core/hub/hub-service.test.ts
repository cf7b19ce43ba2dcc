/**
 * hub.* and models.local/models.delete through core's dispatch (fake engine, real files):
 * search, repo files, the curated list, a download with hub.download events, the token (never
 * returned), models.local and models.delete (refuses the loaded model and paths outside
 * models/), adapters for the loaded base (hub metadata, then the remote header's shapes) and
 * installing one through the adapter registry.
 */
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AdapterInfo, Download, HubModel, HubRepo, LocalModel, RecommendedModel } from "../../api";
import { startFakeCore } from "../../../testing/core/fake-core";
import {
  ADAPTER_REPO,
  DEMO_REPO,
  NO_GGUF_REPO,
  SPLIT_REPO,
  WRONG_ADAPTER_REPO,
  type HubServer,
} from "../../../testing/hub/hf-hub-server";
import { useTestHub } from "../../../testing/hub/test-hub";

let hub: HubServer;

useTestHub((h) => (hub = h));

const core = () => startFakeCore({ hubEndpoint: hub.url, demoAdapters: false, hubProgressIntervalMs: 20 });

async function download(
  call: Awaited<ReturnType<typeof core>>["call"],
  events: Awaited<ReturnType<typeof core>>["events"],
  repo: string,
  file: string,
) {
  // Listening first: the download may finish before the call returns.
  const done = events.next("hub.download", (d) => d.repo === repo && d.file === file && d.state === "done");
  await call<Download>("hub.download", { repo, file });
  return done;
}

describe("hub service", () => {
  it("searches, lists a repo's files and the curated models", async () => {
    const { call } = await core();
    const found = await call<HubModel[]>("hub.search", { query: "demo" });
    expect(found.map((m) => m.repo)).toContain(DEMO_REPO);
    expect(found.find((m) => m.repo === DEMO_REPO)).toMatchObject({
      baseModel: "macaron-test/demo-chat",
      gated: false,
    });
    const repo = await call<HubRepo>("hub.repo", { repo: SPLIT_REPO });
    expect(repo.files).toHaveLength(1);
    expect(repo.files[0]).toMatchObject({ quant: "Q8_0", isAdapter: false });
    expect(repo.files[0]!.parts).toHaveLength(2);
    expect((await call<HubRepo>("hub.repo", { repo: NO_GGUF_REPO })).files).toEqual([]);
    const curated = await call<RecommendedModel[]>("hub.recommended", {});
    expect(new Set(curated.map((m) => m.tier))).toEqual(new Set(["small", "medium", "large", "tall"]));
    expect(curated.map((m) => m.repo)).toContain("Qwen/Qwen3-30B-A3B-GGUF");
  });

  it("stores the token without ever returning it", async () => {
    const { call, dataDir } = await core();
    expect(await call("hub.tokenStatus", {})).toEqual({ set: false, storage: "file" });
    const set = await call("hub.setToken", { token: hub.token });
    expect(set).toEqual({ set: true, storage: "file" });
    expect(JSON.stringify(set)).not.toContain(hub.token);
    expect((await stat(join(dataDir, "hub-token"))).mode & 0o777).toBe(0o600);
    expect(await call("hub.setToken", { token: null })).toEqual({ set: false, storage: "file" });
  });

  it("downloads a model with progress events, lists it in models.local and deletes it (never the loaded one)", async () => {
    const { call, events, dataDir } = await core();
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    expect(events.of("hub.download").some((d) => d.state === "downloading")).toBe(true);
    const split = await download(call, events, SPLIT_REPO, "split-tiny-Q8_0-00001-of-00002.gguf");
    // Adapters and partial downloads are not models.
    await writeFile(join(dataDir, "models", "half.gguf.ipull"), "partial");
    const local = await call<LocalModel[]>("models.local", {});
    expect(local.map((m) => m.fileName).sort()).toEqual([
      "demo-chat-Q8_0.gguf",
      "split-tiny-Q8_0-00001-of-00002.gguf",
    ]);
    const demo = local.find((m) => m.fileName === "demo-chat-Q8_0.gguf")!;
    expect(demo).toMatchObject({
      architecture: "llama",
      repo: DEMO_REPO,
      quant: "Q8_0",
      sizeBytes: done.totalBytes,
    });
    expect(demo.parameters).toBeGreaterThan(500_000);
    expect(demo.contextLength).toBeGreaterThan(0);
    expect(local.find((m) => m.repo === SPLIT_REPO)!.sizeBytes).toBe(split.totalBytes);

    await call("models.open", { path: done.path });
    await expect(call("models.delete", { path: done.path })).rejects.toThrow(/is the loaded model/);
    await expect(call("models.delete", { path: join(dataDir, "macaron.db") })).rejects.toThrow(
      /Only models in the models folder/,
    );
    expect(await call("models.delete", { path: split.path })).toEqual({ deleted: true });
    await expect(stat(join(split.path, "..", "split-tiny-Q8_0-00002-of-00002.gguf"))).rejects.toThrow();
    expect((await call<LocalModel[]>("models.local", {})).map((m) => m.fileName)).toEqual([
      "demo-chat-Q8_0.gguf",
    ]);
  });

  it("finds adapters for the loaded base (metadata, then remote shapes) and installs one with the registry's checks", async () => {
    const { call, events } = await core();
    const done = await download(call, events, DEMO_REPO, "demo-chat-Q8_0.gguf");
    await call("models.open", { path: done.path });
    const matches = await call<{ repo: string; files: { path: string }[]; reason: string }[]>(
      "hub.adaptersForBase",
      {},
    );
    expect(matches.map((m) => m.repo)).toEqual([ADAPTER_REPO]); // the wrong-shape one is left out
    expect(matches[0]!.files.map((f) => f.path).sort()).toEqual([
      "agent-lora.gguf",
      "chat-lora.gguf",
      "coding-lora.gguf",
      "ui-lora.gguf",
    ]);
    expect(matches[0]!.reason).toMatch(/adapter of macaron-test\/demo-chat.*tensor shapes that match/);
    expect(matches.map((m) => m.repo)).not.toContain(WRONG_ADAPTER_REPO);

    const installed = await call<AdapterInfo>("hub.installAdapter", {
      repo: ADAPTER_REPO,
      file: "chat-lora.gguf",
    });
    expect(installed).toMatchObject({ id: "chat", domain: "chat" });
    // The wrong-base one is refused by the same validation as adapters.install.
    await expect(
      call("hub.installAdapter", { repo: WRONG_ADAPTER_REPO, file: "other-base-lora.gguf" }),
    ).rejects.toThrow(/does not fit the loaded model/);
  });
});
