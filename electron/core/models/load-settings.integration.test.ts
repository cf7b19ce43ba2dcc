/**
 * Load settings, the fit estimate and the build status through core's API, with the real
 * engine on the generated small model (its 64-wide heads take a q8_0 KV cache).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Conversation, EngineBuild, EngineStatus, FitEstimate, LoadSettings, Message } from "../../api";
import { writeFixtures } from "../../../native/gguf/fixtures";
import { createCore, type Core } from "../index";
import { hasLocalBuild, nodeLlamaCppDir } from "../engine/native-build";
import { EventRecorder } from "../../../testing/core/events";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { value } from "../../../testing/core/result-value";
import { suiteDir } from "../../../testing/core/temp-dir";

const ctx = { transport: "http" } as const;
const dir = suiteDir("macaron-load-settings-int-");
const cores: Core[] = [];
afterAll(async () => {
  for (const core of cores) await core.close();
});

const chosen: LoadSettings = {
  contextSize: 1024,
  gpuLayers: "auto",
  flashAttention: "auto",
  kvCacheType: "q8_0",
  batchSize: 256,
  threads: null,
};

describe("load settings through core (real engine)", () => {
  it("fit, open with settings, real context numbers in the answer, remembered across a restart", async () => {
    const { basePath } = await writeFixtures(join(dir.path, "fixtures"), { size: "small" });
    const start = async () => {
      const core = await createCore({
        dataDir: join(dir.path, "data"),
        spawnEngine: spawnTestEngine(),
        defaultMaxTokens: 8,
      });
      cores.push(core);
      return core;
    };
    const core = await start();
    const events = new EventRecorder((l) => core.subscribe(l));

    const fit = value<FitEstimate>(
      await core.dispatch("models.fit", { path: basePath, contextSize: 2048 }, ctx),
    );
    expect(fit).toMatchObject({ contextSize: 2048, gpuLayers: 0, trainContextSize: 4096, fits: true });
    expect(fit.ramBytes).toBeGreaterThan(0);

    const before = value<{ settings: LoadSettings; remembered: boolean }>(
      await core.dispatch("models.loadSettings", { path: basePath }, ctx),
    );
    expect(before).toMatchObject({
      remembered: false,
      profile: null,
      settings: { contextSize: null, gpuLayers: "auto" },
    });

    const status = value<EngineStatus>(
      await core.dispatch("models.open", { path: basePath, settings: chosen }, ctx),
    );
    expect(status).toMatchObject({
      state: "ready",
      context: { size: 1024, trainSize: 4096 },
      settings: { contextSize: 1024, kvCacheType: "q8_0", flashAttention: "on", batchSize: 256, threads: 1 },
    });
    // Load progress: never back, 1 only once, just before "ready".
    const loading = events
      .of("engine.status")
      .filter((s) => s.state === "loading")
      .map((s) => s.progress ?? 0);
    expect(loading).toEqual([...loading].sort((a, b) => a - b));
    expect(loading.filter((p) => p === 1)).toHaveLength(1);

    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const done = events.next("chat.done", (d) => d.conversationId === conv.id);
    await core.dispatch(
      "chat.send",
      { conversationId: conv.id, text: "Hello", sampling: { temperature: 0 } },
      ctx,
    );
    const { message } = (await done) as { message: Message };
    expect(message.stats?.contextSize).toBe(1024);
    expect(message.stats?.contextTokens).toBeGreaterThan(0);
    expect(message.stats?.contextTokens).toBeLessThan(1024);

    expect(
      value<{ remembered: boolean; settings: LoadSettings }>(
        await core.dispatch("models.loadSettings", { path: basePath }, ctx),
      ),
    ).toMatchObject({ remembered: true, settings: chosen });
    const build = value<EngineBuild>(await core.dispatch("engine.buildStatus", {}, ctx));
    // `npm run setup` builds llama.cpp for the machine when it can: the real engine then runs that.
    expect(build).toMatchObject(
      hasLocalBuild(nodeLlamaCppDir())
        ? { state: "built", using: "local", error: null }
        : { state: "prebuilt", using: "prebuilt", error: null },
    );
    await core.close();

    // Reopened at start-up with the remembered settings.
    const again = await start();
    const reopened = await new Promise<EngineStatus>((resolve) => {
      const check = () => {
        const s = again.engineStatus();
        if (s.state === "ready") resolve(s);
        else setTimeout(check, 50);
      };
      check();
    });
    expect(reopened.settings).toMatchObject({ contextSize: 1024, kvCacheType: "q8_0" });
  });
});
