import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RegistryIndex } from "../common/registry-protocol";
import { startCloud, type RunningCloud } from "./server";
import { codingManifest, publishAdapter } from "../testing/cloud/hand-built-versions";

let dir: string;
let cloud: RunningCloud;
const ADMIN = "admin-key-registry-1";

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "macaron-registry-"));
  cloud = await startCloud({ dataDir: dir, adminKey: ADMIN });
});
afterEach(async () => {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
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
});
