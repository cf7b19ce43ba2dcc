/**
 * What issue 17 added to the service's routes, on the default engine (SQLite): probes,
 * per-install limits with 429 + Retry-After, the first answer replayed for a repeated batch,
 * and the streamed raw export. cloud/replicas.test.ts runs the same service on PostgreSQL.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BatchResponse } from "../common/feedback-protocol";
import { makeItem, registerInstall, uploadBatch } from "../testing/cloud/items";
import { startCloud, type InstallLimitOptions, type RunningCloud } from "./server";
import { testDir } from "../testing/core/temp-dir";

let dir: string;
let cloud: RunningCloud;
let clock = 1_700_000_000_000;

async function start(perInstall: InstallLimitOptions = {}) {
  dir = testDir("macaron-cloud-");
  cloud = await startCloud({
    dataDir: dir,
    adminKey: "admin-key-1234",
    now: () => clock,
    limits: { perInstall },
  });
  return cloud;
}
afterEach(async () => {
  await cloud.close();
});

const items = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => makeItem(`${prefix}-${String(i).padStart(5, "0")}`));

describe("cloud service: probes, limits, replays, raw export", () => {
  it("answers /healthz, and /readyz with the engine and its migrations", async () => {
    await start();
    expect(await (await fetch(`${cloud.url}/healthz`)).json()).toEqual({ ok: true });
    const ready = await fetch(`${cloud.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, engine: "sqlite", migrations: 3 });
  });

  it("throttles an install past its rate with 429 and the seconds left in the window", async () => {
    clock = 1_700_000_000_000; // 20 s into a minute window (1_700_000_000_000 % 60_000 = 20_000)
    await start({ batchesPerWindow: 2, windowMs: 60_000 });
    const a = await registerInstall(cloud.url);
    const b = await registerInstall(cloud.url);
    expect((await uploadBatch(cloud.url, a, "batch-01", items(1, "a1"))).status).toBe(200);
    expect((await uploadBatch(cloud.url, a, "batch-02", items(1, "a2"))).status).toBe(200);
    const third = await uploadBatch(cloud.url, a, "batch-03", items(1, "a3"));
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("40");
    // Another install has its own window.
    expect((await uploadBatch(cloud.url, b, "batch-01", items(1, "b1"))).status).toBe(200);
    clock += 40_000; // the next window
    expect((await uploadBatch(cloud.url, a, "batch-03", items(1, "a3"))).status).toBe(200);
    expect(cloud.store.countItems(a.installId)).toBe(3);
  });

  it("refuses a batch over the install's item cap with 413 and over its storage cap with 429", async () => {
    await start({ maxItemsPerBatch: 5, maxStoredItems: 8, quotaRetryAfterSeconds: 120 });
    const a = await registerInstall(cloud.url);
    const big = await uploadBatch(cloud.url, a, "batch-big", items(6, "big"));
    expect(big.status).toBe(413);
    expect((await uploadBatch(cloud.url, a, "batch-01", items(5, "one"))).status).toBe(200);
    const over = await uploadBatch(cloud.url, a, "batch-02", items(5, "two"));
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("120");
    expect(((await over.json()) as { error: string }).error).toMatch(/5 items stored, the cap is 8/);
    expect(cloud.store.countItems(a.installId)).toBe(5);
  });

  it("answers a repeated batch with its first answer", async () => {
    await start();
    const a = await registerInstall(cloud.url);
    const first = BatchResponse.parse(
      await (await uploadBatch(cloud.url, a, "batch-01", items(3, "key"))).json(),
    );
    expect(first.accepted).toHaveLength(3);
    const again = BatchResponse.parse(
      await (await uploadBatch(cloud.url, a, "batch-01", items(3, "key"))).json(),
    );
    expect(again).toEqual(first);
    // Same keys in a new batch: duplicates, as before.
    const other = BatchResponse.parse(
      await (await uploadBatch(cloud.url, a, "batch-02", items(3, "key"))).json(),
    );
    expect(other.duplicates).toHaveLength(3);
  });

  it("streams every stored item of a domain as JSONL to the admin only", async () => {
    await start();
    const a = await registerInstall(cloud.url);
    // More than one 64 KiB chunk and one 500-row page.
    for (let b = 0; b < 6; b++)
      expect((await uploadBatch(cloud.url, a, `batch-00${b}`, items(200, `r${b}`))).status).toBe(200);
    await uploadBatch(cloud.url, a, "batch-code", [makeItem("code-00001", { domain: "coding" })]);
    expect((await fetch(`${cloud.url}/v1/export/raw/chat.jsonl`)).status).toBe(401);
    const res = await fetch(`${cloud.url}/v1/export/raw/chat.jsonl`, {
      headers: { authorization: "Bearer admin-key-1234" },
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { installId: string; item: { idempotencyKey: string } });
    expect(lines).toHaveLength(1200);
    expect(new Set(lines.map((l) => l.item.idempotencyKey)).size).toBe(1200);
    expect(lines.every((l) => l.installId === a.installId)).toBe(true);
  });
});
