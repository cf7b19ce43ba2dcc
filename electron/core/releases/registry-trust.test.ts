/**
 * The adapter registry is trusted by key, not by address: AdapterUpdates installs only entries
 * signed by the key pinned for the registry (given with the URL as #key=…, or pinned on first
 * use for a registry on this machine), and talks plain http only to loopback.
 */
import BetterSqlite3 from "better-sqlite3";
import { createHash, generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exportPublicKey, signEntry } from "../../../common/registry-signature";
import { startCloud, type RunningCloud } from "../../../cloud/server";
import { codingManifest, publishAdapter } from "../../../testing/cloud/hand-built-versions";
import { migrate0002 } from "../db/migrations/0002-settings";
import { EventBus } from "../events/event-bus";
import { SettingsStore } from "../settings/settings-store";
import { AdapterUpdates, parseRegistryUrl } from "./adapter-updates";
import type { AdapterReleases } from "./adapter-releases";
import type { ReleaseStore } from "./release-store";
import { testDir } from "../../../testing/core/temp-dir";

const ADMIN = "admin-key-trust-1234";
let dir: string;
let cloud: RunningCloud;
let signingKey: KeyObject;
let publicKey: string;
let proxy: Server;
let proxyUrl: string;
/** What the proxy answers for the index; default: the cloud's own. */
let tamper: ((index: { adapters: Record<string, unknown>[] }) => unknown) | null = null;
/** What the proxy answers for the public key; default: the cloud's own. */
let servedKey: string | null = null;
let staged: string[];
let db: BetterSqlite3.Database;

/** The proxy forwards the index request without its query (a registry that ignores ?base=). */
let dropQuery = false;
let seenIndexUrls: string[] = [];

function updates(baseSha256?: string): AdapterUpdates {
  const releases = {
    stage: (_path: string, manifest: { id: string; version: string }) => {
      staged.push(`${manifest.id} ${manifest.version}`);
      return Promise.resolve();
    },
    gate: () => Promise.resolve({ live: true, status: "live", statusReason: null }),
  } as unknown as AdapterReleases;
  const store = {
    live: () => ({ version: "1.0.0" }),
    version: () => null,
  } as unknown as ReleaseStore;
  return new AdapterUpdates({
    releases,
    store,
    settings: new SettingsStore(db),
    events: new EventBus(() => undefined),
    adaptersDir: join(dir, "adapters"),
    log: () => undefined,
    ...(baseSha256 ? { baseSha256: () => baseSha256 } : {}),
  });
}

beforeEach(async () => {
  dir = testDir("macaron-registry-trust-");
  ({ privateKey: signingKey } = generateKeyPairSync("ed25519"));
  cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: ADMIN, registrySigningKey: signingKey });
  publicKey = cloud.registry.publicKey;
  staged = [];
  tamper = null;
  servedKey = null;
  db = new BetterSqlite3(":memory:");
  migrate0002(db); // the settings table
  await publishAdapter(
    { url: cloud.url, adminKey: ADMIN },
    codingManifest("2.0.0", "0".repeat(64), undefined, "notes"),
    Buffer.from("adapter 2.0.0 bytes"),
  );
  // A loopback "registry" in front of the cloud that can change what it serves.
  dropQuery = false;
  seenIndexUrls = [];
  proxy = createServer((req, res) => {
    void (async () => {
      if (req.url?.startsWith("/v1/registry/index.json")) seenIndexUrls.push(req.url);
      if (req.url === "/v1/registry/public-key" && servedKey) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ algorithm: "ed25519", key: servedKey }));
        return;
      }
      const path = dropQuery ? req.url!.split("?")[0]! : req.url!;
      const upstream = await fetch(`${cloud.url}${path}`);
      const body = Buffer.from(await upstream.arrayBuffer());
      if (path === "/v1/registry/index.json" && tamper) {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify(tamper(JSON.parse(body.toString()) as { adapters: Record<string, unknown>[] })),
        );
        return;
      }
      res.statusCode = upstream.status;
      res.setHeader("content-type", upstream.headers.get("content-type") ?? "application/octet-stream");
      res.end(body);
    })();
  });
  await new Promise<void>((ok) => proxy.listen(0, "127.0.0.1", ok));
  const addr = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
});
afterEach(async () => {
  await new Promise((ok) => proxy.close(ok));
  await cloud.close();
  db.close();
});

async function check(u: AdapterUpdates) {
  return u.check({ wait: true });
}

describe("registry trust", () => {
  it("installs an entry signed by the key given with the URL", async () => {
    const u = updates();
    u.configure({ registryUrl: `${proxyUrl}/#key=${publicKey}` });
    expect(u.settings().registryUrl).toBe(`${proxyUrl}#key=${publicKey}`);
    const r = await check(u);
    expect(r.results).toEqual([
      { adapterId: "coding", version: "2.0.0", outcome: "promoted", message: null },
    ]);
    expect(staged).toEqual(["coding 2.0.0"]);
  });

  it("refuses an unsigned entry", async () => {
    tamper = (index) => ({ ...index, adapters: index.adapters.map(({ signature: _s, ...e }) => e) });
    const u = updates();
    u.configure({ registryUrl: `${proxyUrl}#key=${publicKey}` });
    const r = await check(u);
    expect(r.available).toEqual([]);
    expect(r.results).toEqual([
      {
        adapterId: "coding",
        version: "2.0.0",
        outcome: "failed",
        message: "refused: the registry entry is not signed",
      },
    ]);
    expect(staged).toEqual([]);
    expect(u.settings().lastError).toMatch(
      /1 registry entry refused: refused: the registry entry is not signed/,
    );
  });

  it("refuses an entry changed after signing, or signed by another key", async () => {
    const file = Buffer.from("substituted bytes");
    tamper = (index) => ({
      ...index,
      adapters: index.adapters.map((e) => ({
        ...e,
        sha256: createHash("sha256").update(file).digest("hex"),
        sizeBytes: file.length,
      })),
    });
    const u = updates();
    u.configure({ registryUrl: `${proxyUrl}#key=${publicKey}` });
    const r = await check(u);
    expect(r.results.map((o) => o.message)).toEqual([
      "refused: the registry entry's signature does not match the registry's pinned key",
    ]);
    // Well signed, but by a key other than the pinned one.
    tamper = null;
    const other = exportPublicKey(generateKeyPairSync("ed25519").publicKey);
    u.configure({ registryUrl: `${proxyUrl}#key=${other}` });
    expect((await check(u)).results.map((o) => o.outcome)).toEqual(["failed"]);
    expect(staged).toEqual([]);
  });

  it("pins a loopback registry's key on first use and refuses another key later", async () => {
    const u = updates();
    u.configure({ registryUrl: proxyUrl });
    expect((await check(u)).results.map((o) => o.outcome)).toEqual(["promoted"]);
    // The registry on that address now serves an attacker's key and entries signed with it.
    const attacker = generateKeyPairSync("ed25519");
    servedKey = exportPublicKey(attacker.publicKey);
    tamper = (index) => ({
      ...index,
      adapters: index.adapters.map(({ signature: _s, ...e }) => {
        const forged = { ...e, version: "3.0.0" };
        return { ...forged, signature: signEntry(forged, attacker.privateKey) };
      }),
    });
    const r = await check(u);
    expect(r.results.map((o) => [o.version, o.outcome])).toEqual([["3.0.0", "failed"]]);
    expect(staged).toEqual(["coding 2.0.0"]);
  });

  it("refuses a signed entry whose file is plain http to another host", async () => {
    tamper = (index) => ({
      ...index,
      adapters: index.adapters.map(({ signature: _s, ...e }) => {
        const moved = { ...e, url: "http://registry.example.invalid/files/x.gguf" };
        return { ...moved, signature: signEntry(moved, signingKey) };
      }),
    });
    const u = updates();
    u.configure({ registryUrl: `${proxyUrl}#key=${publicKey}` });
    const r = await check(u);
    expect(r.results).toEqual([
      expect.objectContaining({ outcome: "failed", message: expect.stringMatching(/not https/) as unknown }),
    ]);
    expect(staged).toEqual([]);
  });

  it("allows plain http only to loopback and needs the key for any other host", () => {
    expect(() => parseRegistryUrl("http://registry.example.com")).toThrow(/https/);
    expect(() => parseRegistryUrl(`http://10.0.0.5:8787#key=${publicKey}`)).toThrow(/https/);
    expect(() => parseRegistryUrl("https://registry.example.com")).toThrow(/public key/);
    expect(() => parseRegistryUrl("https://registry.example.com#key=short")).toThrow(/Ed25519/);
    expect(() => parseRegistryUrl("ftp://registry.example.com")).toThrow(/http/);
    expect(parseRegistryUrl(`https://registry.example.com/base/#key=${publicKey}`)).toEqual({
      base: "https://registry.example.com/base",
      key: publicKey,
    });
    for (const url of ["http://127.0.0.1:8787", "http://localhost:8787/", "http://[::1]:8787"])
      expect(parseRegistryUrl(url).key).toBeNull();
    const u = updates();
    expect(() => u.configure({ registryUrl: "http://registry.example.com" })).toThrow(/https/);
  });

  it.each([
    ["a registry that filters by ?base=", false],
    ["a registry that ignores ?base=", true],
  ])("offers only the loaded base's versions: %s", async (_name, ignoresQuery) => {
    const [mine, other] = ["a".repeat(64), "c".repeat(64)];
    const access = { url: cloud.url, adminKey: ADMIN };
    await publishAdapter(access, codingManifest("2.5.0", "0".repeat(64), mine, "mine"), Buffer.from("m"));
    // Newer, same id, trained on other weights of the same architecture: never for this base.
    await publishAdapter(access, codingManifest("3.0.0", "0".repeat(64), other, "other"), Buffer.from("o"));
    dropQuery = ignoresQuery;
    const u = updates(mine);
    u.configure({ registryUrl: `${proxyUrl}/#key=${publicKey}` });
    const r = await check(u);
    expect(seenIndexUrls).toEqual([`/v1/registry/index.json?base=${mine}`]);
    // 2.0.0 names no base file (offered to every base; staging checks its shapes).
    expect(staged).toEqual(["coding 2.0.0", "coding 2.5.0"]);
    expect(r.available.map((a) => a.version)).toEqual(["2.0.0", "2.5.0"]);
  });
});
