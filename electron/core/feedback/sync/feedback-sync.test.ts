import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeItem } from "../../../../testing/cloud/items";
import { FaultProxy, type Fault } from "../../../../testing/cloud/fault-proxy";
import { backoffDelay, parseRetryAfter } from "./backoff";
import type { SyncStatus } from "./feedback-sync";
import { batchIdFor } from "./transport";
import { startRig, type SyncRig } from "../../../../testing/sync/harness";

/** The URL of a port nothing listens on (just released by the OS). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return `http://127.0.0.1:${port}`;
}

const keys = (n: number, prefix = "item") =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, "0")}`);

describe("backoff", () => {
  it("is full jitter under an exponential ceiling capped at 5 minutes", () => {
    expect(backoffDelay(1, () => 0.999, 1000, 300_000)).toBe(999);
    expect(backoffDelay(3, () => 0.5, 1000, 300_000)).toBe(2000);
    expect(backoffDelay(30, () => 0.5, 1000, 300_000)).toBe(150_000);
    expect(backoffDelay(4, () => 0, 1000, 300_000)).toBe(0);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("7", 0)).toBe(7000);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(parseRetryAfter("soon", 0)).toBeNull();
    expect(parseRetryAfter(null, 0)).toBeNull();
  });

  it("derives a stable batch id from the keys", () => {
    expect(batchIdFor(["a", "b"])).toBe(batchIdFor(["a", "b"]));
    expect(batchIdFor(["a", "b"])).not.toBe(batchIdFor(["a", "c"]));
  });
});

describe("FeedbackSync", () => {
  let rig: SyncRig;
  beforeEach(async () => {
    rig = await startRig();
  });
  afterEach(() => rig.close());

  it("registers once, uploads everything in batches and reports idle", async () => {
    rig.outbox.enqueueItems(keys(450).map((k) => makeItem(k)));
    const statuses: SyncStatus[] = [];
    const sync = rig.sync({ onStatus: (s) => statuses.push(s) });
    const status = await sync.syncNow();
    expect(status).toMatchObject({
      state: "idle",
      queued: 0,
      rejectedCount: 0,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(status.lastSyncAt).toBe(rig.clock.now());
    expect(rig.cloud.store.countItems(rig.installId)).toBe(450);
    expect(rig.tokens.value).toMatch(/.{16,}/);
    expect(statuses.map((s) => s.state)).toContain("syncing");
    const token = rig.tokens.value;
    rig.outbox.enqueueItems([makeItem("later-0001")]);
    await sync.syncNow();
    expect(rig.tokens.value).toBe(token); // not registered again
    expect(rig.cloud.store.countItems()).toBe(451);
  });

  it("removes rejected items from the queue and counts them", async () => {
    rig.outbox.enqueueItems([makeItem("ok-000001"), makeItem("text-0001", { consent: "ratings" })]);
    const status = await rig.sync().syncNow();
    expect(status).toMatchObject({ state: "idle", queued: 0, rejectedCount: 1 });
    expect(rig.outbox.refused()).toEqual([
      { key: "text-0001", reason: 'text fields present with consent "ratings"' },
    ]);
  });

  it("rejects the whole batch on 400 without retrying it", async () => {
    rig.outbox.enqueueItems([makeItem("short"), makeItem("fine-00001")]);
    const status = await rig.sync().syncNow();
    expect(status.rejectedCount).toBe(2);
    const reasons = rig.outbox.refused().map((r) => r.reason);
    expect(reasons).toHaveLength(2);
    for (const r of reasons) expect(r).toMatch(/^HTTP 400: items\[0\]\.idempotencyKey/);
    expect(rig.clock.sleeps).toEqual([]);
  });

  it("registers again when the token was rotated (401)", async () => {
    rig.tokens.value = "stale-token-from-another-life";
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const status = await rig.sync().syncNow();
    expect(status).toMatchObject({ state: "idle", queued: 0 });
    expect(rig.tokens.value).not.toBe("stale-token-from-another-life");
  });

  it("registers again after the service forgot the install (its data was wiped)", async () => {
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const sync = rig.sync();
    await sync.syncNow();
    const first = rig.tokens.value;
    rig.cloud.store.db.exec("DELETE FROM installs");
    rig.outbox.enqueueItems([makeItem("k-0000002")]);
    const status = await sync.syncNow();
    expect(status).toMatchObject({ state: "idle", queued: 0 });
    expect(rig.tokens.value).not.toBe(first);
    expect(rig.cloud.store.countItems(rig.installId)).toBe(2);
  });

  it("goes on under a new install id when the token of its registered id is lost (409)", async () => {
    let installId = rig.installId;
    const renewed: string[] = [];
    const deps = {
      getInstall: () => ({ installId }),
      renewInstall: () => {
        installId = randomUUID();
        renewed.push(installId);
        return { installId };
      },
    };
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    await rig.sync(deps).syncNow();
    // The settings (and the token in them) are lost; the install id survived.
    rig.tokens.value = null;
    rig.outbox.enqueueItems([makeItem("k-0000002")]);
    const status = await rig.sync(deps).syncNow();
    expect(status).toMatchObject({ state: "idle", queued: 0, lastError: null });
    expect(renewed).toHaveLength(1);
    expect(rig.cloud.store.countItems(rig.installId)).toBe(1);
    expect(rig.cloud.store.countItems(renewed[0])).toBe(1);
    // A stale token (rotated elsewhere) of a registered id: same path.
    rig.tokens.value = "stale-token-of-a-registered-id";
    rig.outbox.enqueueItems([makeItem("k-0000003")]);
    expect(await rig.sync(deps).syncNow()).toMatchObject({ state: "idle", queued: 0 });
    expect(renewed).toHaveLength(2);
    expect(rig.cloud.store.countItems(renewed[1])).toBe(1);
  });

  it("cannot delete with a lost token and says why", async () => {
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const sync = rig.sync();
    await sync.syncNow();
    rig.tokens.value = null;
    await expect(sync.deleteUploadedData()).rejects.toThrow(/no longer holds its token/);
    expect(rig.cloud.store.countItems(rig.installId)).toBe(1);
  });

  it("does nothing, not even registering, while disabled", async () => {
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const status = await rig.sync({ isEnabled: () => false }).syncNow();
    expect(status.state).toBe("disabled");
    expect(status.queued).toBe(1);
    expect(rig.tokens.value).toBeNull();
  });

  it("deletes the install's uploaded data and returns the count", async () => {
    rig.outbox.enqueueItems(keys(3).map((k) => makeItem(k)));
    const sync = rig.sync();
    await sync.syncNow();
    expect(await sync.deleteUploadedData()).toBe(3);
    expect(rig.cloud.store.countItems()).toBe(0);
    expect(await sync.deleteUploadedData()).toBe(0);
  });

  it("reports a failed delete with the reason", async () => {
    const sync = rig.sync({ endpoint: await closedPort() });
    await expect(sync.deleteUploadedData()).rejects.toThrow(
      /could not register with the feedback service: ECONNREFUSED/,
    );
  });

  it("goes offline with backoff when nothing listens, and cuts the wait short on syncNow", async () => {
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    let release!: () => void;
    const waiting = new Promise<void>((r) => (release = r));
    const sync = rig.sync({
      endpoint: await closedPort(),
      // A real wait that only ends when aborted (syncNow's wake-up or stop).
      sleep: (_ms, signal) =>
        new Promise((r) => {
          release();
          signal.addEventListener("abort", () => r(), { once: true });
        }),
      random: () => 1,
    });
    const run = sync.syncNow();
    await waiting;
    expect(sync.getStatus().state).toBe("offline");
    expect(sync.getStatus().lastError).toMatch(/ECONNREFUSED/);
    expect(sync.getStatus().nextAttemptAt).toBe(rig.clock.now() + 1000);
    await sync.stop();
    expect((await run).queued).toBe(1);
  });
});

describe("FeedbackSync against faults", () => {
  let rig: SyncRig;
  let proxy: FaultProxy | null = null;
  afterEach(async () => {
    await proxy?.close();
    proxy = null;
    await rig.close();
  });

  async function through(faults: Fault[], cloudOpts = {}) {
    rig = await startRig(cloudOpts);
    proxy = await FaultProxy.start({
      target: rig.cloud.url,
      schedule: (n) => faults[n] ?? "none",
      retryAfterSeconds: 42,
    });
    return proxy;
  }

  it("honours Retry-After on 429 and backs off exponentially on 5xx", async () => {
    const p = await through(["none", "throttle", "error5xx", "error5xx"]);
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const status = await rig.sync({ endpoint: p.url }).syncNow();
    expect(status.queued).toBe(0);
    // register, 429 → Retry-After 42 s; then the 2nd and 3rd failures in a row: 0.5·2 s, 0.5·4 s.
    expect(rig.clock.sleeps).toEqual([42_000, 1000, 2000]);
    expect(rig.cloud.store.countItems()).toBe(1);
  });

  it("times out a stalled request instead of hanging", async () => {
    const p = await through(["none", "stall"]);
    rig.outbox.enqueueItems([makeItem("k-0000001")]);
    const errors: (string | null)[] = [];
    const status = await rig
      .sync({ endpoint: p.url, requestTimeoutMs: 500, onStatus: (s) => errors.push(s.lastError) })
      .syncNow();
    expect(status.queued).toBe(0);
    expect(rig.cloud.store.countItems()).toBe(1);
    // The stalled request was given up after its timeout (the error says which), then retried.
    expect(errors).toContain("no answer within 500 ms");
  });

  it("splits a batch the server finds too large (413) and rejects only the single item that still is", async () => {
    rig = await startRig({ limits: { maxBatchBytes: 20_000 } });
    const items = keys(40).map((k) => makeItem(k, { response: "r".repeat(300) }));
    items.push(makeItem("huge-00001", { response: "h".repeat(30_000) }));
    rig.outbox.enqueueItems(items);
    const status = await rig.sync().syncNow();
    expect(status).toMatchObject({ queued: 0, rejectedCount: 1 });
    expect(rig.cloud.store.countItems()).toBe(40);
    const rejected = rig.outbox.refused();
    expect(rejected.map((r) => r.key)).toEqual(["huge-00001"]);
    expect(rejected[0]?.reason).toMatch(/^HTTP 413/);
  });
});
