/**
 * The demo specialists out of the box, and an older install's demo Agent (installed before
 * manifests had a tool-call format) getting the shipped format: real registry, SQLite, files.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoAdapterFiles, demoBasePath, DEMO_TOOL_CALL_FORMATS } from "../../../native/gguf/demo-files";
import { openDatabase } from "../db/database";
import { EventBus } from "../events/event-bus";
import { suiteDir } from "../../../testing/core/temp-dir";
import { AdapterRegistry } from "./adapter-registry";
import { AdapterStore } from "./adapter-store";
import { installDemoAdapters } from "./bundled-adapters";

const root = suiteDir("macaron-bundled-adapters-");
let dataDir: string;
let store: AdapterStore;
let registry: AdapterRegistry;

beforeAll(() => {
  dataDir = join(root.path, "data");
  mkdirSync(dataDir, { recursive: true });
  store = new AdapterStore(openDatabase(":memory:"));
  registry = new AdapterRegistry({
    store,
    dataDir,
    events: new EventBus(),
    basePath: () => demoBasePath(),
    log: () => undefined,
  });
});

const shipped = () => demoAdapterFiles();

describe("the demo specialists", () => {
  it("are installed once, with the Agent's tool-call format", async () => {
    expect(await installDemoAdapters(registry, dataDir, shipped)).toEqual(["chat", "coding", "agent", "ui"]);
    expect(store.get("agent")?.manifest.toolCallFormat).toEqual(DEMO_TOOL_CALL_FORMATS.agent);
    expect(await installDemoAdapters(registry, dataDir, shipped)).toEqual([]);
  });

  it("give an Agent installed without a tool-call format the shipped one, and touch nothing else", async () => {
    const agent = store.get("agent")!;
    const { toolCallFormat: _dropped, ...older } = agent.manifest;
    store.setManifest("agent", older);
    const coding = store.get("coding")!.manifest;
    expect(store.get("agent")?.manifest.toolCallFormat).toBeUndefined();

    await installDemoAdapters(registry, dataDir, shipped);

    expect(store.get("agent")?.manifest).toEqual(agent.manifest);
    expect(store.get("coding")?.manifest).toEqual(coding);
  });

  it("keep a format the stored manifest already has", async () => {
    const own = { ...DEMO_TOOL_CALL_FORMATS.agent!, documented: true };
    store.setManifest("agent", { ...store.get("agent")!.manifest, toolCallFormat: own });
    await installDemoAdapters(registry, dataDir, shipped);
    expect(store.get("agent")?.manifest.toolCallFormat).toEqual(own);
  });
});
