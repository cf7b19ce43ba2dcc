/**
 * Several stateless replicas (real processes) sharing one PostgreSQL: many installs upload at
 * once through fault proxies (5xx, 429 + Retry-After, resets, answers lost after the store),
 * the client retrying on another replica, as behind a load balancer. Every item is stored
 * exactly once, none is lost, the export holds what was accepted; a replica killed with -9
 * mid-batch costs nothing but a retry. Skips only without PostgreSQL's server binaries.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchResponse, FeedbackItem } from "../common/feedback-protocol";
import { encodeBatch, FeedbackEndpoint } from "../electron/core/feedback/sync/transport";
import { FaultProxy, seededSchedule } from "../testing/cloud/fault-proxy";
import { makeItem, registerInstall } from "../testing/cloud/items";
import { PostgresStore } from "./store/postgres-store";
import { postgresSkipReason, startPostgres, type PostgresCluster } from "./testing/postgres";
import { startReplica, type Replica } from "./testing/replica";
import { suiteDir } from "../testing/core/temp-dir";

const skip = postgresSkipReason();
if (skip) console.warn(`multi-replica test skipped: ${skip}`);

const ADMIN = "admin-key-1234";
const INSTALLS = 30;
const BATCHES = 10;
const ITEMS = 20;

let cluster: PostgresCluster;
let database: string;
const dataDir = suiteDir("macaron-replicas-");
let replicas: Replica[] = [];
const proxies: FaultProxy[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Posts one batch until some replica answers 200, moving to the next endpoint after each
 * failure and waiting what a 429 asked for. Returns the answer and the attempts it took.
 */
async function deliver(
  endpoints: string[],
  start: number,
  install: { installId: string; token: string },
  items: FeedbackItem[],
  timeoutMs = 10_000,
): Promise<{ response: BatchResponse; attempts: number }> {
  const body = await encodeBatch(install.installId, items);
  for (let attempt = 0; attempt < 50; attempt++) {
    const endpoint = new FeedbackEndpoint({
      endpoint: endpoints[(start + attempt) % endpoints.length]!,
      fetch,
      now: Date.now,
      requestTimeoutMs: timeoutMs,
    });
    const r = await endpoint.postBatch(install.token, body, new AbortController().signal);
    if (r.kind === "ok") return { response: r.value, attempts: attempt + 1 };
    if (r.kind === "refused" || r.kind === "unauthorized") throw new Error(`batch refused: ${r.reason}`);
    if (r.kind === "retry") await sleep(r.retryAfterMs ?? 20);
  }
  throw new Error("batch not delivered in 50 attempts");
}

describe.skipIf(skip !== null)("cloud service: replicas on one PostgreSQL", () => {
  beforeAll(async () => {
    cluster = await startPostgres();
    database = await cluster.createDatabase();
    // Started together on purpose: their migrations race for the advisory lock.
    replicas = await Promise.all(
      [0, 1, 2].map(() => startReplica({ database, dataDir: dataDir.path, adminKey: ADMIN })),
    );
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await Promise.all(replicas.map((r) => r.stop("SIGKILL")));
    await cluster?.stop();
  });

  it("stores every item of many installs exactly once through faults, and exports them all", async () => {
    for (const r of replicas)
      expect(await (await fetch(`${r.url}/readyz`)).json()).toEqual({
        ok: true,
        engine: "postgres",
        migrations: 3,
      });
    for (const [i, r] of replicas.slice(0, 2).entries())
      proxies.push(
        await FaultProxy.start({
          target: r.url,
          retryAfterSeconds: 1,
          schedule: seededSchedule(
            17 + i,
            { error5xx: 0.05, throttle: 0.02, reset: 0.05, dropResponse: 0.1 },
            ["dropResponse", "throttle"],
          ),
        }),
      );
    const endpoints = [proxies[0]!.url, proxies[1]!.url, replicas[2]!.url];
    const installs = await Promise.all(
      Array.from({ length: INSTALLS }, (_, i) => registerInstall(replicas[i % 3]!.url)),
    );
    const accepted: string[] = [];
    let attempts = 0;
    await Promise.all(
      installs.map(async (install, i) => {
        for (let b = 0; b < BATCHES; b++) {
          const items = Array.from({ length: ITEMS }, (_, k) => makeItem(`i${i}-b${b}-item${k}`));
          const r = await deliver(endpoints, i + b, install, items);
          attempts += r.attempts;
          // A retried batch gets its first answer: all accepted, never "duplicates".
          expect(r.response.duplicates).toEqual([]);
          expect(r.response.accepted.sort()).toEqual(items.map((it) => it.idempotencyKey).sort());
          accepted.push(...r.response.accepted);
        }
      }),
    );
    const total = INSTALLS * BATCHES * ITEMS;
    expect(accepted).toHaveLength(total);
    expect(new Set(accepted).size).toBe(total);
    // The faults did happen (the run exercised retries, replays and Retry-After).
    const faults = proxies.map((p) => p.counts());
    expect(faults.reduce((n, c) => n + c.dropResponse, 0)).toBeGreaterThan(0);
    expect(faults.reduce((n, c) => n + c.throttle, 0)).toBeGreaterThan(0);
    expect(attempts).toBeGreaterThan(INSTALLS * BATCHES);

    const store = await PostgresStore.open(database);
    try {
      expect(await store.count()).toBe(total);
    } finally {
      await store.close();
    }
    const res = await fetch(`${replicas[1]!.url}/v1/export/raw/chat.jsonl`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const lines = (await res.text()).trim().split("\n");
    expect(lines).toHaveLength(total);
    const keys = lines.map((l) => (JSON.parse(l) as { item: FeedbackItem }).item.idempotencyKey);
    expect(new Set(keys)).toEqual(new Set(accepted));
  });

  it("lands a batch once on another replica when the first is killed with -9 mid-batch", async () => {
    const install = await registerInstall(replicas[2]!.url);
    const victim = replicas[0]!;
    // Forwards the batch, holds the stored answer back, and the test kills the replica then.
    const proxy = await FaultProxy.start({ target: victim.url, schedule: () => "forwardThenHold" });
    proxies.push(proxy);
    proxy.once("held", () => victim.proc.kill("SIGKILL"));
    const items = Array.from({ length: ITEMS }, (_, k) => makeItem(`killed-held-${k}`));
    const r = await deliver([proxy.url, replicas[1]!.url], 0, install, items, 2_000);
    expect(await victim.exited).toBeNull();
    expect(r.attempts).toBe(2);
    expect(r.response.accepted.sort()).toEqual(items.map((i) => i.idempotencyKey).sort());

    // Killed as the batch arrives: stored or not, the retry elsewhere lands it once.
    const second = replicas[1]!;
    const proxy2 = await FaultProxy.start({ target: second.url, schedule: () => "none" });
    proxies.push(proxy2);
    proxy2.once("request", () => setImmediate(() => second.proc.kill("SIGKILL")));
    const more = Array.from({ length: ITEMS }, (_, k) => makeItem(`killed-flight-${k}`));
    const r2 = await deliver([proxy2.url, replicas[2]!.url], 0, install, more, 2_000);
    expect(r2.response.accepted.sort()).toEqual(more.map((i) => i.idempotencyKey).sort());

    const store = await PostgresStore.open(database);
    try {
      expect(await store.count(install.installId)).toBe(2 * ITEMS);
    } finally {
      await store.close();
    }
  });

  it("shuts down on SIGTERM after answering the batch in flight", async () => {
    const install = await registerInstall(replicas[2]!.url);
    const items = Array.from({ length: ITEMS }, (_, k) => makeItem(`sigterm-item-${k}`));
    const body = await encodeBatch(install.installId, items);
    const target = new URL("/v1/feedback/batches", replicas[2]!.url);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        target,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-encoding": "gzip",
            "content-length": body.length,
            authorization: `Bearer ${install.token}`,
            // The server's "100 Continue" says it has read the headers: the request is in flight.
            expect: "100-continue",
          },
        },
        (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.on("continue", () => {
        void replicas[2]!.stop("SIGTERM");
        req.end(body);
      });
    });
    const r = await answer;
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as BatchResponse).accepted).toHaveLength(ITEMS);
    expect(await replicas[2]!.exited).toBe(0);
    const store = await PostgresStore.open(database);
    try {
      expect(await store.count(install.installId)).toBe(ITEMS);
    } finally {
      await store.close();
    }
  });
});
