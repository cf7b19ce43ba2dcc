import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { RegistryIndex, RegistryPublicKey } from "../common/registry-protocol";
import { importPublicKey, verifyEntry } from "../common/registry-signature";
import { startCloud, type RunningCloud } from "./server";
import { codingManifest, publishAdapter } from "../testing/cloud/hand-built-versions";
import { fetchRegistryIndex, liveEntry } from "./registry-client";
import { testDir } from "../testing/core/temp-dir";

let dir: string;
let cloud: RunningCloud;
const ADMIN = "admin-key-registry-1";

beforeEach(async () => {
  dir = testDir("macaron-registry-");
  cloud = await startCloud({ dataDir: dir, adminKey: ADMIN });
});
afterEach(async () => {
  await cloud.close();
});

describe("adapter registry", () => {
  it("publishes with the admin key, indexes the version and serves the file with Range", async () => {
    const body = Buffer.from("0123456789abcdef");
    const manifest = codingManifest("2.0.0", "0".repeat(64), undefined, "notes");
    const denied = await fetch(`${cloud.url}/v1/registry/publish`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body,
    });
    expect(denied.status).toBe(401);
    const entry = await publishAdapter({ url: cloud.url, adminKey: ADMIN }, manifest, body);
    expect(entry).toMatchObject({ id: "coding", version: "2.0.0", sizeBytes: 16, releaseNotes: "notes" });
    await expect(publishAdapter({ url: cloud.url, adminKey: ADMIN }, manifest, body)).rejects.toThrow(/409/);
    await expect(
      publishAdapter(
        { url: cloud.url, adminKey: ADMIN },
        { ...manifest, version: "2.0.1", sha256: "f".repeat(64) },
        body,
      ),
    ).rejects.toThrow(/400/);

    const index = RegistryIndex.parse(await (await fetch(`${cloud.url}/v1/registry/index.json`)).json());
    expect(index.adapters.map((a) => a.version)).toEqual(["2.0.0"]);
    const whole = await fetch(`${cloud.url}${entry.url}`);
    expect(Buffer.from(await whole.arrayBuffer()).equals(body)).toBe(true);
    const part = await fetch(`${cloud.url}${entry.url}`, { headers: { range: "bytes=10-" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-15/16");
    expect(await part.text()).toBe("abcdef");
    expect((await fetch(`${cloud.url}${entry.url}`, { headers: { range: "bytes=99-" } })).status).toBe(416);
    expect((await fetch(`${cloud.url}/v1/registry/files/..%2Fcloud.db`)).status).toBe(404);
  });

  it("takes a manifest of any lineage size up to its limit (a long cycle's loss curve), and refuses a wrong length", async () => {
    const body = Buffer.from("adapter bytes");
    const base = codingManifest("2.1.0", "0".repeat(64), undefined, "notes");
    // ~60 KB of lineage: more than a request header may carry.
    const lossCurve = Array.from({ length: 3_000 }, (_, i) => ({ step: i, loss: 1 / (i + 1) }));
    const manifest = { ...base, lineage: { ...base.lineage, details: { lossCurve } } };
    expect(JSON.stringify(manifest).length).toBeGreaterThan(32 * 1024);
    const entry = await publishAdapter({ url: cloud.url, adminKey: ADMIN }, manifest, body);
    expect(entry).toMatchObject({ version: "2.1.0", sizeBytes: body.length });
    expect(Buffer.from(await (await fetch(`${cloud.url}${entry.url}`)).arrayBuffer()).equals(body)).toBe(
      true,
    );
    const index = RegistryIndex.parse(await (await fetch(`${cloud.url}/v1/registry/index.json`)).json());
    expect((index.adapters[0]!.lineage.details as { lossCurve: unknown[] }).lossCurve).toHaveLength(3_000);

    const json = Buffer.from(JSON.stringify({ ...manifest, version: "2.1.1" }));
    const post = (length: string) =>
      fetch(`${cloud.url}/v1/registry/publish`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${ADMIN}`,
          "content-type": "application/octet-stream",
          "x-macaron-manifest-bytes": length,
        },
        body: Buffer.concat([json, body]),
      });
    for (const wrong of [String(json.length - 1), String(json.length + body.length), "-5", "abc"]) {
      const res = await post(wrong);
      expect(res.status, wrong).toBe(400);
    }
    const after = RegistryIndex.parse(await (await fetch(`${cloud.url}/v1/registry/index.json`)).json());
    expect(after.adapters.map((a) => a.version)).toEqual(["2.1.0"]);
  });

  it("names files by content hash (one file per content) and indexes every version two services on one folder publish", async () => {
    // A second service on the same data folder: another replica behind the same load balancer.
    const other = await startCloud({ dataDir: dir, adminKey: ADMIN });
    try {
      const body = Buffer.from("same adapter bytes");
      const versions = ["3.0.0", "3.0.1", "3.0.2", "3.0.3", "3.0.4", "3.0.5"];
      const entries = await Promise.all(
        versions.map((v, i) =>
          publishAdapter(
            { url: (i % 2 ? other : cloud).url, adminKey: ADMIN },
            codingManifest(v, "0".repeat(64), undefined, v),
            // Two distinct contents: the versions of one content share one file.
            i < 3 ? body : Buffer.from("other adapter bytes"),
          ),
        ),
      );
      const index = RegistryIndex.parse(await (await fetch(`${other.url}/v1/registry/index.json`)).json());
      expect(index.adapters.map((a) => a.version).sort()).toEqual(versions);
      const sha = createHash("sha256").update(body).digest("hex");
      expect(entries[0]!.url).toBe(`/v1/registry/files/${sha}.gguf`);
      expect(new Set(entries.map((e) => e.url)).size).toBe(2);
      expect(readdirSync(join(dir, "registry", "files")).sort()).toEqual(
        [...new Set(entries.map((e) => e.url.split("/").pop()!))].sort(),
      );
      const served = await fetch(`${cloud.url}${entries[5]!.url}`);
      expect(await served.text()).toBe("other adapter bytes");
      // Both replicas sign with the folder's one key.
      expect(other.registry.publicKey).toBe(cloud.registry.publicKey);
      const raw = (await (await fetch(`${cloud.url}/v1/registry/index.json`)).json()) as {
        adapters: unknown[];
      };
      const key = importPublicKey(cloud.registry.publicKey);
      expect(raw.adapters.map((e) => verifyEntry(e, key))).toEqual(versions.map(() => "signed"));
    } finally {
      await other.close();
    }
  });

  it("signs each entry with the registry's Ed25519 key, serves the public key and keeps it across restarts", async () => {
    const body = Buffer.from("signed adapter bytes");
    await publishAdapter(
      { url: cloud.url, adminKey: ADMIN },
      codingManifest("4.0.0", "0".repeat(64), undefined, "n"),
      body,
    );
    const served = RegistryPublicKey.parse(await (await fetch(`${cloud.url}/v1/registry/public-key`)).json());
    expect(served).toEqual({ algorithm: "ed25519", key: cloud.registry.publicKey });
    expect(statSync(join(dir, "registry", "signing-key.pem")).mode & 0o077).toBe(0);
    const raw = (await (await fetch(`${cloud.url}/v1/registry/index.json`)).json()) as {
      adapters: Record<string, unknown>[];
    };
    const entry = raw.adapters[0]!;
    const key = importPublicKey(served.key);
    expect(verifyEntry(entry, key)).toBe("signed");
    // Any change to what was signed, a missing signature or another key: refused.
    expect(verifyEntry({ ...entry, sha256: "e".repeat(64) }, key)).toBe("bad-signature");
    expect(verifyEntry({ ...entry, url: "https://elsewhere.example/x.gguf" }, key)).toBe("bad-signature");
    expect(verifyEntry({ ...entry, extra: 1 }, key)).toBe("bad-signature");
    const { signature: _s, ...unsigned } = entry;
    expect(verifyEntry(unsigned, key)).toBe("unsigned");
    expect(verifyEntry(entry, generateKeyPairSync("ed25519").publicKey)).toBe("bad-signature");

    await cloud.close();
    cloud = await startCloud({ dataDir: dir, adminKey: ADMIN });
    expect(cloud.registry.publicKey).toBe(served.key);
  });

  it("keeps versions per base: each base's own 1.1.0, ?base= answers that base's (and its named quantizations'), the cycle's parent is its base's", async () => {
    const q8 = "a".repeat(64);
    const q4 = "b".repeat(64);
    const other = "c".repeat(64);
    const access = { url: cloud.url, adminKey: ADMIN };
    const forQ8 = codingManifest("1.1.0", "0".repeat(64), q8, "for the Q8_0 file");
    // The same weights quantized to Q4_K: the Q8_0 version fits it too.
    const withQ4 = { ...forQ8, base: { ...forQ8.base, compatibleSha256: [q4] } };
    await publishAdapter(access, withQ4, Buffer.from("q8 adapter"));
    // Another base's 1.1.0 is another adapter, not a duplicate; the same base's is one.
    await publishAdapter(
      access,
      codingManifest("1.1.0", "0".repeat(64), other, "other base"),
      Buffer.from("o"),
    );
    await expect(publishAdapter(access, withQ4, Buffer.from("q8 adapter again"))).rejects.toThrow(/409/);
    await publishAdapter(
      access,
      codingManifest("2.0.0", "0".repeat(64), other, "other base, newer"),
      Buffer.from("o2"),
    );
    // An entry that names no base file: offered to every base (the app's install checks its shapes).
    await publishAdapter(
      access,
      codingManifest("0.9.0", "0".repeat(64), undefined, "any"),
      Buffer.from("any"),
    );

    const indexFor = async (sha?: string) =>
      RegistryIndex.parse(
        await (await fetch(`${cloud.url}/v1/registry/index.json${sha ? `?base=${sha}` : ""}`)).json(),
      );
    const notes = (i: RegistryIndex) => i.adapters.map((a) => a.releaseNotes).sort();
    expect(notes(await indexFor())).toHaveLength(4);
    expect(notes(await indexFor(q8))).toEqual(["any", "for the Q8_0 file"]);
    expect(notes(await indexFor(q4))).toEqual(["any", "for the Q8_0 file"]);
    expect(notes(await indexFor(q4.toUpperCase()))).toEqual(["any", "for the Q8_0 file"]);
    expect(notes(await indexFor(other))).toEqual(["any", "other base", "other base, newer"]);
    expect(notes(await indexFor("d".repeat(64)))).toEqual(["any"]);
    const bad = await fetch(`${cloud.url}/v1/registry/index.json?base=../x`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/sha256/);

    // The cycle trains each base's next version from that base's live one.
    const all = await fetchRegistryIndex(cloud.url);
    expect(liveEntry(all, "coding", q4)?.releaseNotes).toBe("for the Q8_0 file");
    expect(liveEntry(all, "coding", other)?.releaseNotes).toBe("other base, newer");
    expect(liveEntry(all, "coding", "d".repeat(64))?.releaseNotes).toBe("any");
    expect(liveEntry(all, "coding")?.releaseNotes).toBe("any");
    expect((await fetchRegistryIndex(cloud.url, undefined, other)).adapters).toHaveLength(3);
  });
});
