/**
 * The probe corpus's cloud cases (testing/corpora/probes/cloud.json) as HTTP requests against
 * the real feedback cloud service on SQLite (hardening.test.ts runs the same attacks on
 * PostgreSQL too), a fresh service per case with an install registered before it (the victim)
 * and another one. Each must get a clear refusal (a 4xx with `{error}` and a sentence) or a
 * safe result: never a 5xx, never a hang; afterwards the service answers /v1/health and the
 * victim's token still posts a batch (no takeover, nothing broken).
 */
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { BatchResponse, RegisterResponse } from "../common/feedback-protocol";
import { makeItem } from "../testing/cloud/items";
import { cloudProbes, type CloudProbe } from "../testing/corpora/probes";
import { startCloud, type RunningCloud } from "./server";
import { testDir } from "../testing/core/temp-dir";

/** A refusal is a check, not work: far past this is a hang. */
const HANG_MS = 30_000;

const running: RunningCloud[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.close();
});

interface Install {
  installId: string;
  token: string;
}

async function register(url: string): Promise<Install> {
  const res = await fetch(`${url}/v1/installs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ installId: randomUUID() }),
  });
  expect(res.status).toBe(200);
  return RegisterResponse.parse(await res.json());
}

/** The case's placeholders filled in (see CloudProbe). */
function fill(value: unknown, victim: Install, other: Install): unknown {
  if (typeof value === "string") {
    return value
      .replaceAll("@VICTIM_ID", victim.installId)
      .replaceAll("@VICTIM_TOKEN", victim.token)
      .replaceAll("@OTHER_TOKEN", other.token)
      .replaceAll("@NEW_ID", () => randomUUID());
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, victim, other));
  if (value && typeof value === "object") {
    const filled = Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, fill(v, victim, other)]),
    ) as Record<string, unknown>;
    const { "@item": key, ...fields } = filled;
    return typeof key === "string" ? makeItem(key, fields) : filled;
  }
  return value;
}

function rawBody(raw: string): Buffer {
  const [tag, n] = raw.split(":");
  switch (tag) {
    case "@BYTES":
      return Buffer.alloc(Number(n), 7);
    case "@ZEROS":
      return Buffer.alloc(Number(n));
    case "@DEEP_BRACKETS":
      return Buffer.from("[".repeat(Number(n)) + "]".repeat(Number(n)));
    default:
      return Buffer.from(raw);
  }
}

function send(url: string, probe: CloudProbe, victim: Install, other: Install): Promise<Response> {
  const r = probe.request;
  const headers: Record<string, string> = {};
  if (r.json !== undefined || r.raw !== undefined) headers["content-type"] = "application/json";
  if (r.auth) headers.authorization = `Bearer ${fill(r.auth, victim, other) as string}`;
  let body: Buffer | undefined =
    r.json !== undefined
      ? Buffer.from(JSON.stringify(fill(r.json, victim, other)))
      : r.raw !== undefined
        ? rawBody(r.raw)
        : undefined;
  if (body && r.gzip) {
    body = gzipSync(body);
    headers["content-encoding"] = "gzip";
  }
  Object.assign(headers, r.headers);
  return fetch(`${url}${fill(r.path, victim, other) as string}`, {
    method: r.method,
    headers,
    body,
    signal: AbortSignal.timeout(HANG_MS),
  });
}

/** The victim's token posts a batch that is stored. */
async function victimStillPosts(url: string, victim: Install): Promise<void> {
  const key = `after-${randomUUID().slice(0, 8)}`;
  const res = await fetch(`${url}/v1/feedback/batches`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${victim.token}` },
    body: JSON.stringify({ protocol: 1, installId: victim.installId, batchId: key, items: [makeItem(key)] }),
  });
  expect(res.status).toBe(200);
  expect(BatchResponse.parse(await res.json()).accepted).toEqual([key]);
}

describe("probe corpus: the feedback cloud (SQLite)", () => {
  const probes = cloudProbes();
  it("has the cloud's cases", () => {
    expect(probes.length).toBeGreaterThanOrEqual(20);
    expect(new Set(probes.map((p) => p.id)).size).toBe(probes.length);
  });

  for (const probe of probes) {
    it(`${probe.id}: ${probe.why}`, async () => {
      const dataDir = testDir("macaron-cloud-probe-");
      const cloud = await startCloud({ dataDir, adminKey: "admin-key-1234" });
      running.push(cloud);
      const victim = await register(cloud.url);
      const other = await register(cloud.url);

      const statuses: number[] = [];
      let last: Response | null = null;
      let text = "";
      for (let i = 0; i < (probe.repeat ?? 1); i++) {
        last = await send(cloud.url, probe, victim, other);
        text = await last.text();
        statuses.push(last.status);
        // Never a server error, whatever came before.
        expect(last.status, `${probe.id} #${i}: ${text.slice(0, 300)}`).toBeLessThan(500);
      }
      const context = `${probe.id}: ${last!.status} ${text.slice(0, 300)} (${statuses.join(",")})`;
      expect(last!.status, context).toBe(probe.expect.status);
      if (probe.repeat) {
        // A burst: accepted until the cap, refused after it.
        const firstRefused = statuses.indexOf(probe.expect.status);
        expect(
          statuses.slice(0, firstRefused).every((s) => s === 200),
          context,
        ).toBe(true);
        expect(
          statuses.slice(firstRefused).every((s) => s === probe.expect.status),
          context,
        ).toBe(true);
      }
      if (probe.expect.status >= 400) {
        const body = JSON.parse(text) as { error?: unknown };
        expect(typeof body.error, context).toBe("string");
        expect((body.error as string).length, context).toBeGreaterThan(10);
        expect(body.error, context).not.toMatch(/internal/i);
        if (probe.expect.error) expect(body.error, context).toMatch(new RegExp(probe.expect.error));
      }
      if (probe.expect.retryAfter)
        expect(Number(last!.headers.get("retry-after")), context).toBeGreaterThan(0);

      // Still serving; the victim's install is still its own.
      const health = await fetch(`${cloud.url}/v1/health`, { signal: AbortSignal.timeout(HANG_MS) });
      expect(health.status).toBe(200);
      expect(((await health.json()) as { ok: boolean }).ok).toBe(true);
      await victimStillPosts(cloud.url, victim);
    });
  }
});
