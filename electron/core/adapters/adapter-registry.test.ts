import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { writeWrongBaseAdapter } from "../../../native/gguf/adapters";
import { openDatabase } from "../db/database";
import { EventBus } from "../events/event-bus";
import { EventRecorder } from "../../../testing/core/events";
import { suiteDir } from "../../../testing/core/temp-dir";
import { AdapterRegistry } from "./adapter-registry";
import { AdapterStore } from "./adapter-store";

const root = suiteDir("macaron-registry-");
let fx: FixturePaths;
let small: FixturePaths;
beforeAll(async () => {
  fx = await writeFixtures(join(root.path, "fx"));
  small = await writeFixtures(join(root.path, "fx"), { size: "small" });
});

let n = 0;
function setup(base: string | null = null) {
  const dataDir = join(root.path, `data-${n++}`);
  const db = openDatabase(":memory:");
  const bus = new EventBus();
  const events = new EventRecorder((l) => bus.subscribe(l));
  let basePath = base;
  const registry = new AdapterRegistry({
    store: new AdapterStore(db),
    dataDir,
    events: bus,
    basePath: () => basePath,
    log: () => undefined,
  });
  const files = () => (existsSync(registry.dir) ? readdirSync(registry.dir) : []);
  return { registry, events, files, db, setBase: (p: string | null) => (basePath = p) };
}

/** A scratch folder with copies of fixture files (a path) or given contents, under new names. */
function scratch(files: Record<string, string | Buffer>): string {
  const dir = join(root.path, `scratch-${n++}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    if (typeof content === "string" && existsSync(content)) copyFileSync(content, path);
    else writeFileSync(path, content);
  }
  return dir;
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => new Error("expected a refusal"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("invalid_input");
  return err as ApiError;
}

const adapter = (id: string) => {
  const a = fx.adapters.find((x) => x.id === id);
  if (!a) throw new Error(id);
  return a;
};

describe("AdapterRegistry install", () => {
  it("installs a fixture adapter with its manifest: copied by id + sha, listed as fitting, announced", async () => {
    const s = setup(fx.basePath);
    const coding = adapter("coding");
    const info = await s.registry.install(coding.path);
    expect(info).toMatchObject({
      id: "coding",
      name: "Coding",
      domain: "coding",
      version: "1.0.0",
      sha256: coding.manifest.sha256,
      sizeBytes: coding.manifest.sizeBytes,
      enabled: true,
      scale: 1,
      defaultScale: 1,
      fitsLoadedModel: true,
      incompatibleReason: null,
      usageCount: 0,
      base: { architecture: "llama", baseName: coding.manifest.base.baseName },
      lineage: { parent: null, trainedFrom: "generated fixture" },
    });
    expect(s.files()).toEqual([`coding-${coding.manifest.sha256.slice(0, 12)}.gguf`]);
    expect(readFileSync(join(s.registry.dir, s.files()[0] ?? ""))).toEqual(readFileSync(coding.path));
    expect(await s.registry.list()).toEqual([info]);
    expect(s.events.of("adapters.changed")).toHaveLength(1);
    expect(s.registry.get("coding")?.manifest.routingExamples).toEqual(coding.manifest.routingExamples);
  });

  it("without a manifest derives id and name from the file name and GGUF metadata, version 1.0.0", async () => {
    const s = setup(null);
    const dir = scratch({ "My Helper v2.gguf": adapter("ui").path });
    const info = await s.registry.install(join(dir, "My Helper v2.gguf"));
    expect(info).toMatchObject({
      id: "My-Helper-v2",
      name: "Macaron UI adapter (demo)",
      domain: "general",
      version: "1.0.0",
      fitsLoadedModel: null, // no model loaded
    });
  });

  const refusals: [string, () => Promise<string>, RegExp][] = [
    ["a missing file", () => Promise.resolve(join(root.path, "nope.gguf")), /No file at .*nope\.gguf/],
    [
      "random bytes",
      () =>
        Promise.resolve(
          join(
            scratch({ "junk.gguf": Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)) }),
            "junk.gguf",
          ),
        ),
      /not a GGUF file|GGUF/i,
    ],
    [
      "a truncated adapter",
      () => {
        const bytes = readFileSync(adapter("chat").path);
        return Promise.resolve(
          join(scratch({ "cut.gguf": bytes.subarray(0, Math.floor(bytes.length / 2)) }), "cut.gguf"),
        );
      },
      /truncated|ends|incomplete|shorter/i,
    ],
    [
      "an adapter for another base",
      async () => writeWrongBaseAdapter(join(scratch({}), "wrong.gguf")),
      /"wrong\.gguf" does not fit the loaded model.*The loaded model is "Macaron demo \(tiny, nonsense output\)" \(base\.gguf\)/,
    ],
    [
      "a model instead of an adapter",
      () => Promise.resolve(fx.basePath),
      /"base\.gguf" is a base model, not a LoRA adapter/,
    ],
    [
      "a file that does not match its manifest's sha256",
      () => {
        const dir = scratch({
          "chat.gguf": adapter("chat").path,
          "chat.json": adapter("coding").manifestPath,
        });
        return Promise.resolve(join(dir, "chat.gguf"));
      },
      /does not match its manifest: its sha256 is/,
    ],
    [
      "a manifest that is not JSON",
      () =>
        Promise.resolve(
          join(scratch({ "chat.gguf": adapter("chat").path, "chat.json": "{ nope" }), "chat.gguf"),
        ),
      /manifest chat\.json is not valid JSON/,
    ],
  ];
  it.each(refusals)("refuses %s with a clear message and changes nothing", async (_, make, message) => {
    const s = setup(fx.basePath);
    const path = await make();
    const err = await refusal(s.registry.install(path));
    expect(err.message).toMatch(message);
    expect(await s.registry.list()).toEqual([]);
    expect(s.files()).toEqual([]);
    expect(s.events.of("adapters.changed")).toEqual([]);
  });

  it("refuses duplicates by id and by content, keeping the installed one", async () => {
    const s = setup(fx.basePath);
    await s.registry.install(adapter("coding").path);
    // Another file whose manifest claims the id "coding".
    const manifest = { ...adapter("chat").manifest, id: "coding" };
    const sameId = scratch({ "x.gguf": adapter("chat").path, "x.json": JSON.stringify(manifest) });
    expect((await refusal(s.registry.install(join(sameId, "x.gguf")))).message).toBe(
      'An adapter "coding" is already installed (version 1.0.0). Remove it first to install this one.',
    );
    // The same bytes under another name.
    const sameSha = scratch({ "other.gguf": adapter("coding").path });
    expect((await refusal(s.registry.install(join(sameSha, "other.gguf")))).message).toBe(
      'This file is already installed as "coding" (version 1.0.0).',
    );
    expect((await s.registry.list()).map((a) => a.id)).toEqual(["coding"]);
    expect(s.files()).toHaveLength(1);
  });

  it("installs concurrently without double installs", async () => {
    const s = setup(fx.basePath);
    const results = await Promise.allSettled([
      s.registry.install(adapter("ui").path),
      s.registry.install(adapter("ui").path),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(s.files()).toHaveLength(1);
  });
});

describe("AdapterRegistry switches", () => {
  it("enables, disables, rescales and removes (row and file), announcing each change", async () => {
    const s = setup(fx.basePath);
    await s.registry.install(adapter("agent").path);
    expect(await s.registry.update("agent", { enabled: false })).toMatchObject({ enabled: false, scale: 1 });
    expect(await s.registry.update("agent", { scale: 0.5 })).toMatchObject({ enabled: false, scale: 0.5 });
    expect(await s.registry.update("agent", { enabled: true })).toMatchObject({ enabled: true, scale: 0.5 });
    await expect(s.registry.update("ghost", { enabled: true })).rejects.toMatchObject({ code: "not_found" });
    s.registry.countUsage(["agent", "agent"]);
    expect((await s.registry.list())[0]?.usageCount).toBe(1);
    expect(await s.registry.remove("agent")).toBe(true);
    expect(await s.registry.remove("agent")).toBe(false);
    expect(await s.registry.list()).toEqual([]);
    expect(s.files()).toEqual([]);
    expect(s.events.of("adapters.changed")).toHaveLength(5);
  });

  it("judges the fit against whichever base is loaded, and a deleted file as missing", async () => {
    const s = setup(null);
    const info = await s.registry.install(adapter("chat").path);
    expect(info.fitsLoadedModel).toBeNull();
    s.setBase(small.basePath);
    const [misfit] = await s.registry.list();
    expect(misfit?.fitsLoadedModel).toBe(false);
    expect(misfit?.incompatibleReason).toMatch(/does not fit the loaded model/);
    s.setBase(fx.basePath);
    expect((await s.registry.list())[0]).toMatchObject({ fitsLoadedModel: true, incompatibleReason: null });
    const stored = s.registry.get("chat");
    rmSync(stored?.filePath ?? "");
    expect((await s.registry.list())[0]).toMatchObject({
      fitsLoadedModel: false,
      incompatibleReason: expect.stringMatching(/adapter file is missing/) as unknown,
    });
  });
});

describe("AdapterRegistry across architectures (the Tall base's qwen family)", () => {
  let qwen3: FixturePaths;
  let qwen3moe: FixturePaths;
  beforeAll(async () => {
    qwen3 = await writeFixtures(join(root.path, "fx"), { architecture: "qwen3" });
    qwen3moe = await writeFixtures(join(root.path, "fx"), { architecture: "qwen3moe" });
  });

  it("installs qwen3 adapters on the qwen3 base and refuses llama and qwen3moe ones, naming the architectures", async () => {
    const s = setup(qwen3.basePath);
    const info = await s.registry.install(qwen3.adapters[0]!.path);
    expect(info).toMatchObject({ id: "chat", fitsLoadedModel: true, base: { architecture: "qwen3" } });
    const llama = await refusal(s.registry.install(adapter("coding").path));
    expect(llama.message).toBe(
      `"coding.gguf" was made for the llama architecture, but the loaded model is qwen3. ` +
        `The loaded model is "Macaron tiny Qwen3 (nonsense output)" (base-qwen3.gguf).`,
    );
    const moe = await refusal(s.registry.install(qwen3moe.adapters[1]!.path));
    expect(moe.message).toMatch(
      /^"coding\.gguf" was made for the qwen3moe architecture, but the loaded model is qwen3\./,
    );
    expect(s.files()).toHaveLength(1);
  });

  it("refuses an adapter whose manifest names another architecture than the file", async () => {
    const s = setup(null);
    const dir = scratch({ "chat.gguf": qwen3.adapters[0]!.path, "chat.json": adapter("chat").manifestPath });
    const err = await refusal(s.registry.install(join(dir, "chat.gguf")));
    expect(err.message).toBe(
      `"chat.gguf" does not match its manifest: the file is a qwen3 adapter, the manifest says it is for a ` +
        "llama base. The manifest may belong to another adapter.",
    );
  });

  it("judges installed llama adapters unfit for a qwen base, with the reason", async () => {
    const s = setup(fx.basePath);
    await s.registry.install(adapter("ui").path);
    s.setBase(qwen3moe.basePath);
    expect((await s.registry.list())[0]).toMatchObject({
      fitsLoadedModel: false,
      incompatibleReason: expect.stringMatching(
        /^"ui-[0-9a-f]{12}\.gguf" was made for the llama architecture, but the loaded model is qwen3moe\.$/,
      ) as unknown,
    });
  });
});
