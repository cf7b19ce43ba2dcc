/**
 * The registry's index lock across separate OS processes (replicas sharing one artifact
 * folder), not just two services in one process: each publisher is its own node process
 * (cloud/testing/registry-publisher.ts), released at one moment by a line on stdin.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RegistryIndex } from "../common/registry-protocol";
import { acquireDirLock, INDEX_LOCK, RegistryStore, STALE_LOCK_MS } from "./registry";
import { versionBody, type PublishResult } from "./testing/registry-publisher";
import { testDir } from "../testing/core/temp-dir";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => {
  dir = testDir("macaron-registry-procs-");
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

interface Child {
  proc: ChildProcessWithoutNullStreams;
  /** Resolves once the child printed `line` (its readiness signal). */
  printed(line: string): Promise<void>;
  output(): string;
  exited: Promise<number | null>;
}

function start(args: string[]): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", "cloud/testing/registry-publisher.ts", ...args], {
    cwd: ROOT,
  });
  children.push(proc);
  let out = "";
  let err = "";
  const waiters: { line: string; resolve: () => void }[] = [];
  proc.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0))
      if (out.split("\n").includes(w.line)) w.resolve();
      else waiters.push(w);
  });
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return {
    proc,
    output: () => out,
    exited,
    printed: (line) =>
      new Promise<void>((resolve, reject) => {
        if (out.split("\n").includes(line)) return resolve();
        waiters.push({ line, resolve });
        void exited.then((code) =>
          reject(new Error(`publisher exited (${code}) before "${line}":\n${out}${err}`)),
        );
      }),
  };
}

/** Starts one publisher per version list, releases them together, returns each one's results. */
async function publishAtOnce(lists: string[][]): Promise<PublishResult[][]> {
  const kids = lists.map((versions) => start(["publish", dir, versions.join(",")]));
  await Promise.all(kids.map((k) => k.printed("ready")));
  for (const k of kids) k.proc.stdin.end("go\n");
  const codes = await Promise.all(kids.map((k) => k.exited));
  expect(codes).toEqual(lists.map(() => 0));
  return kids.map((k) =>
    k
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as PublishResult),
  );
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const indexVersions = () =>
  RegistryIndex.parse(JSON.parse(readFileSync(join(dir, "registry", "index.json"), "utf8"))).adapters.map(
    (a) => a.version,
  );

/** The folder holds the index and one whole file per content: no lock, temp or stray entries. */
function expectCleanFolder(versions: string[]): void {
  // No lock or scratch file left: the files, the index and the registry's signing key.
  expect(readdirSync(join(dir, "registry")).sort()).toEqual(["files", "index.json", "signing-key.pem"]);
  const files = readdirSync(join(dir, "registry", "files")).sort();
  expect(files).toEqual(versions.map((v) => `${sha(versionBody(v))}.gguf`).sort());
  for (const f of files) expect(`${sha(readFileSync(join(dir, "registry", "files", f)))}.gguf`).toBe(f);
}

describe("registry lock across processes", () => {
  it("three processes publishing the same versions at once: one winner per version, every version indexed once", async () => {
    const versions = Array.from({ length: 8 }, (_, i) => `4.0.${i}`);
    const results = await publishAtOnce([versions, [...versions].reverse(), versions]);
    for (const v of versions) {
      const outcomes = results.map((r) => r.find((x) => x.version === v));
      expect(outcomes.filter((o) => o?.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => o && !o.ok).map((o) => o!.status)).toEqual([409, 409]);
    }
    expect(indexVersions().sort()).toEqual(versions);
    expectCleanFolder(versions);
  });

  it("recovers the lock of a holder killed while holding it, at once, and loses no version after", async () => {
    const lock = join(dir, "registry", INDEX_LOCK);
    const holder = start(["hold", dir]);
    await holder.printed("held");
    const owner = JSON.parse(readFileSync(join(lock, "owner.json"), "utf8")) as { pid: number };
    expect(owner.pid).toBe(holder.proc.pid);
    // Held by a live process: not taken, not broken (waitMs 0: one look, then 503).
    await expect(acquireDirLock(lock, 0)).rejects.toMatchObject({ statusCode: 503 });
    holder.proc.kill("SIGKILL");
    await holder.exited;
    // Its folder is still there, and fresh: one look (waitMs 0) breaks it, so the dead pid told,
    // not the folder's age.
    expect(readdirSync(join(dir, "registry"))).toContain(INDEX_LOCK);
    (await acquireDirLock(lock, 0))();
    expect(readdirSync(join(dir, "registry"))).not.toContain(INDEX_LOCK);

    const second = start(["hold", dir]);
    await second.printed("held");
    second.proc.kill("SIGKILL");
    await second.exited;
    // Three processes meet the dead holder's lock together; each breaks it at most once and
    // none may break a lock another took meanwhile: every version of every process is indexed.
    const lists = [0, 1, 2].map((p) => Array.from({ length: 4 }, (_, i) => `5.${p}.${i}`));
    const results = await publishAtOnce(lists);
    expect(results.flat().every((r) => r.ok)).toBe(true);
    expect(indexVersions().sort()).toEqual(lists.flat().sort());
    expectCleanFolder(lists.flat());
  });

  it("breaks a lock from another host only once it is older than the stale age", async () => {
    new RegistryStore(dir);
    const lock = join(dir, "registry", INDEX_LOCK);
    mkdirSync(lock);
    writeFileSync(
      join(lock, "owner.json"),
      JSON.stringify({ pid: process.pid, host: "another-host.invalid", token: "t-other" }),
    );
    await expect(acquireDirLock(lock, 0)).rejects.toMatchObject({ statusCode: 503 });
    const past = (Date.now() - STALE_LOCK_MS - 1000) / 1000;
    utimesSync(lock, past, past);
    const release = await acquireDirLock(lock, 0);
    expect(JSON.parse(readFileSync(join(lock, "owner.json"), "utf8"))).toMatchObject({ pid: process.pid });
    expect(readFileSync(join(lock, "owner.json"), "utf8")).not.toContain("t-other");
    release();
    expect(readdirSync(join(dir, "registry")).sort()).toEqual(["files", "signing-key.pem"]);
  });
});
