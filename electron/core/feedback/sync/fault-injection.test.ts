/**
 * The sync between the real cloud service and a real SQLite outbox, with a fault-injecting
 * proxy in between. The promise under test: every item ends up stored exactly once, none is
 * lost, and nothing is sent without consent.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  FaultProxy,
  seededSchedule,
  type Fault,
  type FaultSchedule,
  type ProxiedRequest,
} from "../../../../testing/cloud/fault-proxy";
import { makeItem } from "../../../../testing/cloud/items";
import { startRig, type SyncRig } from "../../../../testing/sync/harness";
import { QueuedOutbox } from "../../../../testing/sync/queued-outbox";

const N = 1000;
const allKeys = Array.from({ length: N }, (_, i) => `fb-${String(i).padStart(6, "0")}`);

let rig: SyncRig;
let proxy: FaultProxy;
afterEach(async () => {
  await proxy.close();
  await rig.close();
});

async function setUp(schedule: FaultSchedule) {
  rig = await startRig();
  proxy = await FaultProxy.start({ target: rig.cloud.url, schedule, retryAfterSeconds: 3 });
  rig.outbox.enqueueItems(
    allKeys.map((k) => makeItem(k, { domain: ["chat", "coding", "agent", "ui"][k.length % 4]! })),
  );
}

/** Resolves when the proxy emits `event` for its n-th request. */
function when(event: "request" | "held", n: number): Promise<ProxiedRequest> {
  return new Promise((resolve) => {
    const on = (r: ProxiedRequest) => {
      if (r.n !== n) return;
      proxy.off(event, on);
      resolve(r);
    };
    proxy.on(event, on);
  });
}

/** Rows at the server: how many, how many distinct keys, and whether they are exactly ours. */
function serverRows() {
  const db = rig.cloud.store.db;
  const { n, uniq } = db
    .prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT idempotency_key) AS uniq FROM items")
    .get() as { n: number; uniq: number };
  const keys = (db.prepare("SELECT idempotency_key AS k FROM items ORDER BY k").all() as { k: string }[]).map(
    (r) => r.k,
  );
  return { n, distinct: uniq, exact: keys.join() === allKeys.join() };
}

describe("feedback sync under injected faults", () => {
  it("stores 1,000 items exactly once through 5xx, 429, resets, stalls and lost answers", async () => {
    const prefix: Fault[] = [
      "none",
      "error5xx",
      "throttle",
      "reset",
      "stall",
      "dropResponse",
      "dropResponse",
    ];
    await setUp(
      seededSchedule(
        20251130,
        { error5xx: 0.15, throttle: 0.1, reset: 0.1, stall: 0.05, dropResponse: 0.15 },
        prefix,
      ),
    );
    const status = await rig.sync({ endpoint: proxy.url, requestTimeoutMs: 300 }).syncNow();

    expect(serverRows()).toEqual({ n: N, distinct: N, exact: true });
    expect(status).toMatchObject({ state: "idle", queued: 0, rejectedCount: 0 });
    expect(rig.outbox.count()).toBe(0);
    expect(rig.outbox.refused()).toEqual([]);
    const counts = proxy.counts();
    for (const f of ["error5xx", "throttle", "reset", "stall", "dropResponse"] as const)
      expect(counts[f]).toBeGreaterThan(0);
    // A batch was stored but its answer lost: the resend came back as duplicates, not new rows.
    expect(proxy.log.some((r) => r.fault === "dropResponse" && r.path === "/v1/feedback/batches")).toBe(true);
    // 429 waits what the server said; the others back off with jitter.
    expect(rig.clock.sleeps).toContain(3000);
  });

  it.each([
    ["after the server stored the batch (answer never came)", "forwardThenHold", "held"],
    ["before the server saw the batch", "stall", "request"],
  ] as const)("resumes after the app was killed mid-batch %s", async (_, fault, event) => {
    await setUp((n) => (n === 2 ? fault : "none"));
    const first = rig.sync({ endpoint: proxy.url, requestTimeoutMs: 10_000 });
    const killed = when(event, 2).then(async () => {
      // The app dies: the request in flight is abandoned, the outbox file stays.
      await first.stop();
      rig.outbox.close();
    });
    // Register (n=0) and batch 1 (n=1) go through; batch 2 (n=2) is the one killed.
    await first.syncNow();
    await killed;
    expect(rig.cloud.store.countItems()).toBe(fault === "forwardThenHold" ? 400 : 200);

    const reopened = QueuedOutbox.open(rig.outboxPath);
    try {
      expect(reopened.count()).toBe(N - 200);
      const status = await rig.sync({ endpoint: proxy.url, outbox: reopened }).syncNow();
      expect(status).toMatchObject({ state: "idle", queued: 0 });
      expect(reopened.count()).toBe(0);
      expect(serverRows()).toEqual({ n: N, distinct: N, exact: true });
    } finally {
      reopened.close();
    }
  });

  it("sends nothing at all without consent", async () => {
    await setUp(() => "none");
    const status = await rig.sync({ endpoint: proxy.url, isEnabled: () => false }).syncNow();
    expect(status).toMatchObject({ state: "disabled", queued: N });
    expect(proxy.log).toEqual([]);
    expect(rig.cloud.store.countItems()).toBe(0);
  });

  it("makes no request after stop() when consent is revoked mid-sync", async () => {
    // Batches 1 and 2 go through; batch 3 hangs at the proxy until the client gives up.
    await setUp((n) => (n === 3 ? "stall" : "none"));
    let enabled = true;
    // A request timeout far past the test's own: stop() must abort the stalled request, since
    // waiting for the timeout would fail the test (no wall-clock bound needed).
    const sync = rig.sync({ endpoint: proxy.url, isEnabled: () => enabled, requestTimeoutMs: 3_600_000 });
    const revoked = when("request", 3).then(async () => {
      enabled = false;
      await sync.stop();
    });
    const run = sync.syncNow();
    await revoked;
    const stoppedAt = performance.now();
    expect((await run).state).toBe("disabled");
    // A later nudge (e.g. a new feedback event) sends nothing either.
    expect((await sync.syncNow()).state).toBe("disabled");
    expect(proxy.log.filter((r) => r.at > stoppedAt)).toEqual([]);
    expect(proxy.log).toHaveLength(4);
    expect(rig.cloud.store.countItems()).toBe(400);
    expect(rig.outbox.count()).toBe(N - 400);
  });
});
