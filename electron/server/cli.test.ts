/** The `npm run serve` entry as a real process: its output contract, a bad --model, signals. */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../../testing/server/test-core";
import { suiteDir } from "../../testing/core/temp-dir";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cli = join(import.meta.dirname, "cli.ts");

const dir = suiteDir("macaron-cli-");
let child: ChildProcess;
let stdout = "";
let stderr = "";
let url = "";

beforeAll(async () => {
  writeFileSync(join(dir.path, "bad.gguf"), "not a model");
  child = spawn(
    process.execPath,
    [
      "--import",
      tsxLoader,
      cli,
      "--port",
      "0",
      "--data-dir",
      join(dir.path, "data"),
      "--model",
      join(dir.path, "bad.gguf"),
      "--api-key",
      "secret-key",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
      const match = /^listening on (\S+)$/m.exec(stdout);
      // The hint about the code follows the listening line, maybe in a later chunk.
      if (match?.[1] && /^\(the sign-in code/m.test(stdout)) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
});

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
});

describe("serve CLI", () => {
  it("prints one listening line with a single-use sign-in code, never the key, bound to 127.0.0.1", () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]{43}$/);
    expect(stdout.match(/listening on/g)).toHaveLength(1);
    expect(stdout).not.toContain("secret-key");
    expect(stdout).not.toContain("api key:"); // the key was given
    expect(stdout).toContain("the sign-in code works once");
  });

  it("signs a browser in with the printed code once, then refuses it", async () => {
    const first = await fetch(url, { redirect: "manual" });
    expect(first.status).toBe(302);
    expect(first.headers.get("set-cookie")).toMatch(/^macaron_session_[0-9a-f]{16}=/);
    expect((await fetch(url, { redirect: "manual" })).status).toBe(401);
  });

  it("prints a fresh sign-in URL on SIGUSR2", async () => {
    const fresh = new Promise<string>((resolve) => {
      const onData = () => {
        const match = /^sign in at (\S+)$/m.exec(stdout);
        if (match?.[1]) {
          child.stdout?.off("data", onData);
          resolve(match[1]);
        }
      };
      child.stdout?.on("data", onData);
    });
    child.kill("SIGUSR2");
    const next = await fresh;
    expect(next).not.toBe(url);
    expect((await fetch(next, { redirect: "manual" })).status).toBe(302);
  });

  it("keeps serving with no model after an invalid --model, and says why", async () => {
    expect(stderr).toMatch(/could not load .*bad\.gguf: .*GGUF/);
    const base = new URL(url).origin;
    const res = await fetch(`${base}/api/call/models.status`, {
      method: "POST",
      headers: { authorization: "Bearer secret-key", "content-type": "application/json" },
      body: "{}",
    });
    expect((await readJson(res)).value.model).toBeNull();
  });

  it("exits 0 on SIGTERM", async () => {
    const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });
});

describe("serve CLI arguments", () => {
  it("refuses a --temperature outside 0..2 with exit 2 and the reason, before starting", async () => {
    for (const value of ["3", "-1", "warm", ""]) {
      const proc = spawn(process.execPath, ["--import", tsxLoader, cli, `--temperature=${value}`], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
      expect(code).toBe(2);
      expect(err).toContain(`--temperature must be 0..2, not ${value}`);
    }
  });
});
