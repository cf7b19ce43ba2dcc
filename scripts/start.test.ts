import { spawn, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { testDir } from "../testing/core/temp-dir";

const root = fileURLToPath(new URL("..", import.meta.url));
const startScript = join(root, "scripts", "start.mjs");
/**
 * electron's package resolves its binary as $ELECTRON_OVERRIDE_DIST_PATH/electron when that
 * variable is set, so the tests choose what "the Electron binary" is on every machine.
 */
function fakeElectron(script: string | null): NodeJS.ProcessEnv {
  const dir = testDir("macaron-start-");
  if (script !== null) {
    writeFileSync(join(dir, "electron"), `#!/bin/sh\n${script}\n`);
    chmodSync(join(dir, "electron"), 0o755);
  }
  return { ...process.env, ELECTRON_OVERRIDE_DIST_PATH: dir, DISPLAY: ":99" };
}

describe.runIf(process.platform !== "win32")("npm start", () => {
  it("falls back to headless mode with one line saying why, and serves the app", async () => {
    const dataDir = testDir("macaron-start-");
    const child = spawn(process.execPath, [startScript, "--port", "0", "--data-dir", dataDir], {
      cwd: root,
      env: fakeElectron(null),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stderr: string[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const lines: string[] = [];
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout });
        rl.on("line", (line) => {
          lines.push(line);
          const match = /listening on (\S+)/.exec(line);
          if (match?.[1]) resolve(match[1]);
        });
        child.on("exit", (code) =>
          reject(new Error(`exited ${code}: ${lines.join("\n")}\n${stderr.join("")}`)),
        );
      });
      const fallback = lines.filter((l) => l.startsWith("Electron runtime not available"));
      expect(fallback).toHaveLength(1);
      expect(fallback[0]).toMatch(
        /^Electron runtime not available on this machine \(binary not found at .+\); starting headless mode — open the URL below in a browser\.$/,
      );
      // The extra --port 0 replaced the default 8080, and the server answers on it.
      expect(new URL(url).hostname).toBe("127.0.0.1");
      expect(new URL(url).port).not.toBe("8080");
      const page = await fetch(url);
      expect(page.status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("reports a binary that cannot run (missing libraries) and starts headless instead", () => {
    const env = fakeElectron('echo "error while loading shared libraries: libnss3.so" >&2; exit 127');
    // --help makes the headless server print its usage and exit, so this stays quick.
    const result = spawnSync(process.execPath, [startScript, "--help"], { cwd: root, env, encoding: "utf8" });
    expect(result.stdout).toContain(
      "Electron runtime not available on this machine (error while loading shared libraries: libnss3.so); starting headless mode",
    );
  });

  it("launches a working Electron binary on the app folder and exits with its code", () => {
    const env = fakeElectron(
      'if [ "$1" = "--version" ]; then echo v41.7.1; exit 0; fi\necho "app:$1 extra:$2"; exit 3',
    );
    const result = spawnSync(process.execPath, [startScript, "--inspect-app"], {
      cwd: root,
      env,
      encoding: "utf8",
    });
    expect(result.stdout).toContain(`app:${root.replace(/\/$/, "")} extra:--inspect-app`);
    expect(result.stdout).not.toContain("headless");
    expect(result.status).toBe(3);
  });

  it.runIf(process.platform === "linux")(
    "--serve (npm run serve) runs the built out/main/cli.js under plain node, with the server's defaults",
    async () => {
      const dataDir = testDir("macaron-start-");
      const child = spawn(process.execPath, [startScript, "--serve", "--data-dir", dataDir], {
        cwd: root,
        env: fakeElectron('echo "must not run" >&2; exit 9'),
        stdio: ["ignore", "pipe", "pipe"],
      });
      const lines: string[] = [];
      try {
        // The hint line names the server's pid (kill -USR2 PID).
        const pid = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout }).on("line", (line) => {
            lines.push(line);
            const match = /kill -USR2 (\d+)/.exec(line);
            if (match?.[1]) resolve(match[1]);
          });
          child.on("exit", (code) => reject(new Error(`exited ${code}: ${lines.join("\n")}`)));
        });
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        expect(argv[1]).toBe(join(root, "out", "main", "cli.js"));
        expect(argv.join(" ")).not.toMatch(/tsx/);
        expect(lines.some((l) => l.startsWith("Electron runtime not available"))).toBe(false);
        // Port 0, the server's own default, not start's 8080.
        const listening = lines.find((l) => l.startsWith("listening on "));
        expect(new URL(listening!.slice("listening on ".length)).port).not.toBe("8080");
      } finally {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  );
});
