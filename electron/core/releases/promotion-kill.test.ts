/**
 * A real crash during a promotion: a child process runs core with the real engine, installs a
 * passing coding 2.0.0 from a file (staged, then the gate in the background) and is killed —
 * its whole process group, engine included — with SIGKILL at a random moment of the
 * gate/promotion. The database must then hold either the old live set or the new one, never a
 * mix, and core must start again on it: the interrupted version staged, chat answering with
 * the live version and stamping the release in force, the version promotable.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdapterVersionInfo, Conversation, Message, Release, Result } from "../../api";
import { codingManifest } from "../../../testing/cloud/hand-built-versions";
import { demoAdapterSpec } from "../../../native/gguf/adapters";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { encodeGguf, gv } from "../../../native/gguf/writer";
import { spawnNodeEngine } from "../engine/spawn-node";
import { createCore, type Core } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { suiteDir } from "../../../testing/core/temp-dir";

const CHILD = fileURLToPath(new URL("../../../testing/releases/promote-child.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
// The fixture adapters answer with markers: the smoke contract is their gate.
const ENV = { ...process.env, MACARON_ENGINE_THREADS: "1", MACARON_CONTRACT: "smoke" };
const ctx = { transport: "ipc" } as const;
const dir = suiteDir("macaron-promotion-kill-");
let fixtures: FixturePaths;
let versionFile: string;
/** STAGED → DONE of the run nobody killed: the window the random kills aim at. */
let gateMs = 250;
let runs = 0;

/** How the child ended: its stdout lines, whether SIGKILL ended it, its gate's duration. */
interface ChildRun {
  lines: string[];
  killed: boolean;
  stagedToDoneMs: number | null;
}

/** Kill when: never, `ms` after the version is staged, or on the first line matching. */
type KillAt = { never: true } | { afterStagedMs: number } | { onLine: RegExp };

function runChild(dataDir: string, at: KillAt): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    ["--import", TSX, CHILD, dataDir, fixtures.basePath, fixtures.adaptersDir, versionFile],
    { detached: true, stdio: ["ignore", "pipe", "pipe"], env: ENV },
  );
  const lines: string[] = [];
  let stderr = "";
  let stagedAt = 0;
  let doneAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const killGroup = (): void => {
    try {
      // Negative pid: the child's whole process group, its engine child included.
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone: it finished before the kill landed.
    }
  };
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    if (line.startsWith("STAGED")) {
      stagedAt = performance.now();
      if ("afterStagedMs" in at) timer = setTimeout(killGroup, at.afterStagedMs);
    }
    if (line.startsWith("DONE")) doneAt = performance.now();
    if ("onLine" in at && at.onLine.test(line)) killGroup();
  });
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      killGroup();
      reject(new Error(`the child never ended; lines: ${lines.join(" | ")}\n${stderr}`));
    }, 30_000);
    child.on("exit", (code, signal) => {
      clearTimeout(guard);
      clearTimeout(timer);
      if (signal !== "SIGKILL" && code !== 0) {
        reject(new Error(`the child failed (${code ?? signal}): ${lines.join(" | ")}\n${stderr}`));
        return;
      }
      // A kill that landed after a clean exit did not interrupt anything.
      resolve({ lines, killed: signal === "SIGKILL", stagedToDoneMs: doneAt ? doneAt - stagedAt : null });
    });
  });
}

interface VersionRow {
  version: string;
  status: string;
  sha256: string;
  file_path: string;
}

/**
 * The database as the killed process left it, read-only: intact, exactly one live coding
 * version, and the adapters pointer, the version statuses and the releases telling the same
 * story. Returns the live coding version.
 */
function checkDatabase(dataDir: string): string {
  const db = new BetterSqlite3(join(dataDir, "macaron.db"), { readonly: true, fileMustExist: true });
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    const versions = db
      .prepare("SELECT version, status, sha256, file_path FROM adapter_versions WHERE adapter_id = 'coding'")
      .all() as VersionRow[];
    const live = versions.filter((v) => v.status === "live");
    expect(live).toHaveLength(1);
    const current = live[0]!;
    expect(db.prepare("SELECT version, sha256, file_path FROM adapters WHERE id = 'coding'").get()).toEqual({
      version: current.version,
      sha256: current.sha256,
      file_path: current.file_path,
    });
    const releases = db.prepare("SELECT reason, detail, adapters_json FROM releases ORDER BY id").all() as {
      reason: string;
      detail: string | null;
      adapters_json: string;
    }[];
    const coding = (r: { adapters_json: string } | undefined): string | undefined =>
      (JSON.parse(r?.adapters_json ?? "[]") as { id: string; version: string }[]).find(
        (a) => a.id === "coding",
      )?.version;
    expect(coding(releases.at(-1))).toBe(current.version);
    const promotions = releases.filter((r) => r.reason === "promote");
    const v2 = versions.find((v) => v.version === "2.0.0");
    if (current.version === "1.0.0") {
      // Killed before the promotion committed: no trace of 2.0.0 in force anywhere.
      expect(promotions).toEqual([]);
      expect(releases.some((r) => coding(r) === "2.0.0")).toBe(false);
      expect(["staged", "evaluating"]).toContain(v2?.status);
    } else {
      expect(current.version).toBe("2.0.0");
      expect(promotions.map((r) => r.detail)).toEqual(["coding 1.0.0 → 2.0.0"]);
      expect(releases.at(-1)?.reason).toBe("promote");
      expect(versions.find((v) => v.version === "1.0.0")?.status).toBe("retired");
    }
    return current.version;
  } finally {
    db.close();
  }
}

async function call<T>(core: Core, method: string, input: unknown): Promise<T> {
  const r: Result<unknown> = await core.dispatch(method, input, ctx);
  if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

/**
 * Core again on the killed app's data: the interrupted version is staged (or live), a chat turn
 * pinned to coding answers like the coding adapter and is stamped with the release in force,
 * and a staged version can still be promoted.
 */
async function restartAndCheck(dataDir: string, liveVersion: string): Promise<void> {
  const core = await createCore({
    dataDir,
    initialModel: fixtures.basePath,
    adaptersDir: fixtures.adaptersDir,
    spawnEngine: spawnNodeEngine({ env: ENV }),
  });
  const events = new EventRecorder((l) => core.subscribe(l));
  try {
    const versions = await call<AdapterVersionInfo[]>(core, "adapters.versions", { id: "coding" });
    expect(versions.find((v) => v.live)?.version).toBe(liveVersion);
    expect(versions.find((v) => v.version === "2.0.0")?.status).toBe(
      liveVersion === "2.0.0" ? "live" : "staged",
    );

    const conv = await call<Conversation>(core, "conversations.create", {});
    const done = events.next("chat.done", (d) => d.conversationId === conv.id);
    const sent = await call<{ assistantMessage: Message }>(core, "chat.send", {
      conversationId: conv.id,
      text: "Hello",
      adapters: { pinned: "coding" },
      sampling: { temperature: 0, maxTokens: 6 },
    });
    expect((await done).message.content).toMatch(/^\{\{\{/);
    const inForce = (await call<Release[]>(core, "releases.list", { limit: 1 }))[0]!;
    const stamped = await call<Release | null>(core, "releases.forMessage", {
      messageId: sent.assistantMessage.id,
    });
    expect(stamped?.id).toBe(inForce.id);
    expect(stamped?.adapters.find((a) => a.id === "coding")?.version).toBe(liveVersion);

    if (liveVersion === "1.0.0") {
      const promoted = await call<AdapterVersionInfo>(core, "adapters.promote", {
        id: "coding",
        version: "2.0.0",
      });
      expect(promoted).toMatchObject({ version: "2.0.0", status: "live", live: true });
      const latest = (await call<Release[]>(core, "releases.list", { limit: 1 }))[0]!;
      expect(latest).toMatchObject({ reason: "promote", detail: "coding 1.0.0 → 2.0.0" });
    }
  } finally {
    events.dispose();
    await core.close();
  }
}

/** One crash: a fresh app promoting 2.0.0, killed per `at`, then checked and restarted. */
async function crashOnce(at: KillAt): Promise<{ run: ChildRun; live: string }> {
  const dataDir = join(dir.path, `app-${++runs}`);
  const run = await runChild(dataDir, at);
  expect(run.lines).toContain("READY");
  expect(run.lines.some((l) => l.startsWith("STAGED 2.0.0"))).toBe(true);
  const live = checkDatabase(dataDir);
  // A run that was not killed finished the promotion.
  if (!run.killed) expect(live).toBe("2.0.0");
  await restartAndCheck(dataDir, live);
  return { run, live };
}

const contractBefore = process.env.MACARON_CONTRACT;
beforeAll(async () => {
  // The in-process cores (restartAndCheck) gate with the smoke contract too.
  process.env.MACARON_CONTRACT = "smoke";
  fixtures = await writeFixtures(join(dir.path, "fixtures"));
  // A passing coding 2.0.0: the v1 weights under another name (so another sha256).
  const spec = demoAdapterSpec("coding");
  versionFile = join(dir.path, "coding-v2.gguf");
  writeFileSync(
    versionFile,
    encodeGguf({ ...spec, metadata: { ...spec.metadata, "general.name": gv.str("coding v2 (crash test)") } }),
  );
  writeFileSync(
    join(dir.path, "coding-v2.json"),
    JSON.stringify(codingManifest("2.0.0", "0".repeat(64), fixtures.baseSha256, "crash test")),
  );
});
afterAll(() => {
  if (contractBefore === undefined) delete process.env.MACARON_CONTRACT;
  else process.env.MACARON_CONTRACT = contractBefore;
});

describe("killing the app during a promotion", () => {
  it("promotes when nobody kills it", async () => {
    const { run, live } = await crashOnce({ never: true });
    expect(run.killed).toBe(false);
    expect(run.lines.at(-1)).toBe("DONE passed");
    expect(live).toBe("2.0.0");
    gateMs = run.stagedToDoneMs ?? gateMs;
  }, 60_000);

  it("leaves the old or the new version live, never a mix, when killed right after the last case", async () => {
    // The last case just finished: the promotion transaction is about to run.
    const { run, live } = await crashOnce({ onLine: /^GATE running (\d+)\/\1$/ });
    console.log(`kill on the last case: killed=${run.killed}, live ${live}, last line "${run.lines.at(-1)}"`);
    expect(run.lines.some((l) => /^GATE running (\d+)\/\1$/.test(l))).toBe(true);
  }, 60_000);

  for (let i = 1; i <= 4; i++) {
    it(`survives SIGKILL at a random moment of the gate (#${i})`, async () => {
      // Up to a bit past the measured gate, so that some kills land after the commit too.
      const afterStagedMs = Math.round(Math.random() * gateMs * 1.2);
      const { run, live } = await crashOnce({ afterStagedMs });
      console.log(
        `kill #${i}: ${afterStagedMs} ms after STAGED (gate ${Math.round(gateMs)} ms), killed=${run.killed}, ` +
          `live ${live}, last line "${run.lines.at(-1)}"`,
      );
    }, 60_000);
  }
});
