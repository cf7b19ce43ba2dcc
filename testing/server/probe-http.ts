/**
 * What the probe tests share: one call to the headless server over HTTP, the rule every probe
 * answer must keep (a clear refusal in the app's shape, or a success; never "internal", never a
 * hang), and, for the hostile-peer probes, the headless server's HTTP app over the real core
 * with a scripted engine (they need no model, and the Agent's tool calls must be scripted).
 */
import { join } from "node:path";
import { expect } from "vitest";
import type { ErrorCode } from "../../electron/api";
import { assembleCore, type Core, type CoreParts } from "../../electron/core/index";
import { buildServer } from "../../electron/server/app";
import { FakeEngine } from "../engine/fake-engine";
import { FIXTURE_DEMO } from "../core/fixture-demo";
import { scaledBudget } from "../core/calibrated-budget";
import { tempDir } from "../core/temp-dir";

/**
 * The most one probe may take, start to answer, on the reference machine. Refusals are checks,
 * not work: 5 s is generous. On a slower or busier machine the bound scales with a calibration
 * measured when a probe takes longer (testing/core/calibrated-budget.ts).
 */
export const PROBE_BUDGET_MS = 5_000;
/** A probe's time against the budget scaled to this machine as it is now. */
export const probeBudget = (ms: number): number =>
  ms < PROBE_BUDGET_MS ? PROBE_BUDGET_MS : scaledBudget(PROBE_BUDGET_MS);

export interface Answer {
  status: number;
  body: { ok: boolean; value?: unknown; error?: { code: string; message: string } };
  ms: number;
}

export interface ProbeTarget {
  url: string;
  apiKey: string;
}

/** POST one call; a probe that does not answer within the budget (ten times over) fails as a hang. */
export async function callServer(
  server: ProbeTarget,
  method: string,
  input: unknown,
  route = `/api/call/${method}`,
): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${server.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(input),
    // A hang, not a slow answer: far past any scaled budget.
    signal: AbortSignal.timeout(PROBE_BUDGET_MS * 10),
  });
  const body = (await res.json()) as Answer["body"];
  return { status: res.status, body, ms: performance.now() - started };
}

export interface ClearAnswerOptions {
  /**
   * The error codes a 5xx may carry here: "upstream" (502) is how the app reports a model hub
   * that failed or answered something unusable, a clear refusal that names the hub, not the
   * app's own failure. 500 and "internal" are never allowed.
   */
  serverCodes?: readonly ErrorCode[];
}

/** A refusal in the app's shape, or a success; never a server error of the app's own, always in time. */
export function expectClearAnswer(what: string, answer: Answer, options: ClearAnswerOptions = {}): void {
  const context = `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
  expect(answer.ms, context).toBeLessThan(probeBudget(answer.ms));
  if (answer.status === 200) {
    expect(answer.body.ok, context).toBe(true);
    return;
  }
  expect(answer.status, context).toBeGreaterThanOrEqual(400);
  expect(answer.body.ok, context).toBe(false);
  expect(answer.body.error?.code, context).not.toBe("internal");
  if (answer.status >= 500) {
    expect(answer.status, context).not.toBe(500);
    expect(options.serverCodes ?? [], context).toContain(answer.body.error?.code);
  }
  expect(answer.body.error?.message.length ?? 0, context).toBeGreaterThan(10);
}

/** /api/health answers 200: the server still serves after a probe. */
export async function expectHealthy(server: ProbeTarget): Promise<void> {
  const health = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(PROBE_BUDGET_MS) });
  expect(health.status).toBe(200);
}

export interface ScriptedServer extends ProbeTarget {
  core: Core;
  engine: FakeEngine;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The headless server's HTTP app (buildServer, as startServer serves it) on loopback over the
 * real core, with a scripted engine and the fixture demo model open.
 */
export async function startScriptedServer(
  parts: Partial<Omit<CoreParts, "dataDir">> = {},
): Promise<ScriptedServer> {
  const dir = tempDir("macaron-probes-");
  const engine = new FakeEngine();
  const core = await assembleCore(
    { dataDir: join(dir.path, "data"), log: () => undefined, ...FIXTURE_DEMO, ...parts },
    () => engine,
  );
  const apiKey = "p".repeat(64);
  const app = await buildServer({ core, apiKey, rendererDir: join(dir.path, "no-ui"), host: "127.0.0.1" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const server: ScriptedServer = {
    url,
    apiKey,
    core,
    engine,
    dataDir: join(dir.path, "data"),
    close: async () => {
      await app.close();
      await core.close();
      dir.remove();
    },
  };
  const opened = await callServer(server, "models.openDemo", {});
  if (!opened.body.ok) throw new Error(opened.body.error?.message ?? "the demo did not open");
  return server;
}
