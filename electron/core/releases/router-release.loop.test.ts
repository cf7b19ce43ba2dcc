/**
 * The router's head travels with a release (issue 29): on loopback, with the real cloud
 * registry (signed entries), the real engine on the tiny fixture base and the marker fixture
 * adapters, a coding version whose lineage carries a routing head for this base is downloaded,
 * gated (smoke contract, router cases with the head in place) and promoted — auto then routes with
 * the head; rolling coding back takes the head away with it (the kernel classifier again); a
 * version carrying a corrupt head is never promoted and the live router stays.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterVersionInfo, Result, UpdateCheck } from "../../api";
import { startCloud, type RunningCloud } from "../../../cloud/server";
import { codingManifest, publishAdapter } from "../../../testing/cloud/hand-built-versions";
import { DEMO_ADAPTERS, demoAdapterSpec } from "../../../native/gguf/adapters";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { encodeGguf, gv } from "../../../native/gguf/writer";
import { EngineSupervisor } from "../engine/supervisor";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { smokeContract } from "../contract/default-contract";
import { assembleCore, type Core } from "../index";
import { encodeRouterArtifact, trainRoutingHead } from "../router/routing-head";
import { suiteDir } from "../../../testing/core/temp-dir";

const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-router-release-");
const ADMIN = "admin-key-router-release-1234";
let fixtures: FixturePaths;
let cloud: RunningCloud;
let core: Core;

async function call<T>(method: string, input: unknown): Promise<T> {
  const r: Result<unknown> = await core.dispatch(method, input, ctx);
  if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

beforeAll(async () => {
  fixtures = await writeFixtures(join(dir.path, "fixtures"));
  cloud = await startCloud({ dataDir: join(dir.path, "cloud"), adminKey: ADMIN });
  core = await assembleCore(
    {
      dataDir: join(dir.path, "app"),
      initialModel: fixtures.basePath,
      adaptersDir: fixtures.adaptersDir,
      demoAdapters: false,
      contract: smokeContract(),
      registryUrl: cloud.url,
      updatesInitialDelayMs: 3_600_000,
      log: () => undefined,
    },
    () => new EngineSupervisor(spawnTestEngine()),
  );
});
afterAll(async () => {
  await core?.close();
  await cloud?.close();
});

/** A coding version that answers like v1 (other bytes: another name) with `router` in its lineage. */
async function publishCoding(version: string, router: unknown): Promise<void> {
  const spec = demoAdapterSpec("coding");
  const manifest = codingManifest(version, "0".repeat(64), fixtures.baseSha256, "test");
  await publishAdapter(
    { url: cloud.url, adminKey: ADMIN },
    { ...manifest, lineage: { ...manifest.lineage, details: { router } } },
    encodeGguf({ ...spec, metadata: { ...spec.metadata, "general.name": gv.str(`coding ${version}`) } }),
  );
}

const reason = async (text: string) => (await core.adapters.resolve("auto", text)).routing.reason;

describe("a routing head in a release", () => {
  it("goes live with its version, is rolled back with it, and a corrupt one never goes live", async () => {
    // The head: the fixture adapters' routing examples on this base's embeddings.
    const rows = DEMO_ADAPTERS.flatMap((a) => a.routingExamples.map((text) => ({ label: a.id, text })));
    const vectors = await core.engine.embed(rows.map((r) => r.text));
    const head = trainRoutingHead(
      rows.map((r, i) => ({ ...r, embedding: vectors[i]! })),
      { baseSha256: fixtures.baseSha256, version: 1 },
    );
    const text = "Write a TypeScript function that sorts an array.";
    expect(await reason(text)).not.toMatch(/router v/);

    await publishCoding("2.0.0", encodeRouterArtifact(head.artifact));
    const check = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
    expect(check.results.find((r) => r.adapterId === "coding")).toMatchObject({ outcome: "promoted" });
    expect(await reason(text)).toMatch(/\[router v1\]$/);

    const back = await call<AdapterVersionInfo>("adapters.rollback", { id: "coding", version: "1.0.0" });
    expect(back).toMatchObject({ version: "1.0.0", live: true });
    expect(await reason(text)).not.toMatch(/router v/);

    await publishCoding("3.0.0", { gz: "bm90IGd6aXA=" });
    const again = await call<UpdateCheck>("adapters.checkUpdates", { wait: true });
    const coding = again.results.find((r) => r.adapterId === "coding");
    expect(coding?.outcome).not.toBe("promoted");
    expect(coding?.message).toMatch(/carries an unusable router: the router artifact cannot be read/);
    const live = (await call<AdapterVersionInfo[]>("adapters.versions", { id: "coding" })).find(
      (v) => v.live,
    );
    expect(live?.version).toBe("1.0.0");
    expect(await reason(text)).not.toMatch(/router v/);
  });
});
