/**
 * The leading adapter's tool-call format reaches the turn (ResolvedAdapters.toolFormat): the
 * shipped demo specialists installed through the real registry (SQLite, files, manifests),
 * pinned and blended.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoAdapterFiles, demoBasePath, DEMO_TOOL_CALL_FORMATS } from "../../../native/gguf/demo-files";
import { openDatabase } from "../db/database";
import { EventBus } from "../events/event-bus";
import { AdapterRouter } from "../router/adapter-router";
import { MemoryRouterStore } from "../router/store";
import { suiteDir } from "../../../testing/core/temp-dir";
import { AdapterRegistry } from "./adapter-registry";
import { AdapterRouting } from "./adapter-routing";
import { AdapterStore } from "./adapter-store";

const root = suiteDir("macaron-adapter-routing-");
let routing: AdapterRouting;
let store: AdapterStore;

beforeAll(async () => {
  const db = openDatabase(":memory:");
  store = new AdapterStore(db);
  const registry = new AdapterRegistry({
    store,
    dataDir: join(root.path, "data"),
    events: new EventBus(),
    basePath: () => demoBasePath(),
    log: () => undefined,
  });
  for (const path of await demoAdapterFiles()) await registry.install(path);
  const router = new AdapterRouter({
    // Pins and blends never embed.
    embed: () => Promise.reject(new Error("not used by pinned or blended turns")),
    modelKey: () => "demo",
    store: new MemoryRouterStore(),
  });
  routing = new AdapterRouting({ registry, router, log: () => undefined });
});

describe("the tool format of a turn", () => {
  it("is the Agent specialist's when it answers alone", async () => {
    const resolved = await routing.resolve({ pinned: "agent" }, "Set a timer for 15 minutes.");
    expect(resolved.toolFormat).toEqual(DEMO_TOOL_CALL_FORMATS.agent);
    expect(store.get("agent")?.manifest.toolCallFormat).toEqual(DEMO_TOOL_CALL_FORMATS.agent);
  });

  it("follows the adapter with the highest scale in a blend, and is absent for the others", async () => {
    expect((await routing.resolve({ blend: { agent: 1, chat: 0.4 } }, "x")).toolFormat).toEqual(
      DEMO_TOOL_CALL_FORMATS.agent,
    );
    expect((await routing.resolve({ blend: { agent: 0.3, chat: 1 } }, "x")).toolFormat).toBeUndefined();
    expect((await routing.resolve({ pinned: "coding" }, "x")).toolFormat).toBeUndefined();
    expect((await routing.resolve("base", "x")).toolFormat).toBeUndefined();
  });
});

describe("a turn while adapters are being installed", () => {
  it("decides once the installs under way are in the registry, over the whole set", async () => {
    const registry = new AdapterRegistry({
      store: new AdapterStore(openDatabase(":memory:")),
      dataDir: join(root.path, "installing"),
      events: new EventBus(),
      basePath: () => demoBasePath(),
      log: () => undefined,
    });
    const router = new AdapterRouter({
      embed: () => Promise.reject(new Error("not used by pinned turns")),
      modelKey: () => "demo",
      store: new MemoryRouterStore(),
    });
    // Nothing installed yet: a pin on Coding is refused.
    const now = new AdapterRouting({ registry, router, log: () => undefined });
    await expect(now.resolve({ pinned: "coding" }, "Write a function.")).rejects.toThrow(/coding/);
    // What core does when the demo opens: the page offers suggestions once the model is ready,
    // while the specialists are still being installed. The turn asked then waits for them.
    let done!: () => void;
    const installing = new Promise<void>((resolve) => (done = resolve));
    const waiting = new AdapterRouting({
      registry,
      router,
      log: () => undefined,
      installed: () => installing,
    });
    const turn = waiting.resolve({ pinned: "coding" }, "Write a function.");
    for (const path of await demoAdapterFiles()) await registry.install(path);
    done();
    const resolved = await turn;
    expect(resolved.adapters.map((a) => a.path)).toEqual([expect.stringMatching(/coding/)]);
  });
});
