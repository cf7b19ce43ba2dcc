#!/usr/bin/env node
// `npm start`: build when needed, then open the desktop app. Where Electron's runtime cannot
// start (no binary — it cannot be downloaded on the dev machines — no display, missing
// libraries), run headless mode instead and say so in one line.
// Extra arguments go to the headless server: `npm start -- --port 9000 --model m.gguf`.
// `npm run serve` is `start.mjs --serve`: headless mode only, with the server's own defaults.
// Headless mode runs the built out/main/cli.js under plain Node (no tsx: its loader and the
// npm wrapper cost ~0.65 s per start); from sources: `npx tsx electron/server/cli.ts`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, HEADLESS_BUILD, isStale } from "./build-freshness.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const serveOnly = process.argv[2] === "--serve";
const extraArgs = process.argv.slice(serveOnly ? 3 : 2);

/**
 * The desktop app needs all three bundles (main + engine, preload, renderer); rebuild them
 * when one is missing or older than the sources.
 */
function ensureDesktopBuild() {
  if (
    !isStale(["out/main/index.js", "out/main/engine.js", "out/preload/index.js", "out/renderer/index.html"])
  )
    return;
  console.error("start: building the app (electron-vite build)…");
  const status = build();
  if (status !== 0) {
    console.error(`Build failed (exit ${status}).`);
    process.exit(status ?? 1);
  }
}

/**
 * The command line of headless mode: node out/main/cli.js, built first when stale. Should the
 * build fail, the server still starts, from the sources under tsx (the API is useful without
 * the UI; the pages then answer 503 or show the old build).
 */
function headlessCommand() {
  if (isStale(HEADLESS_BUILD)) {
    console.error("start: building headless mode (electron-vite build)…");
    const status = build();
    if (status !== 0) {
      console.error(`start: the build failed (exit ${status}); starting from the sources (tsx) instead`);
      return [require.resolve("tsx/cli"), join(root, "electron", "server", "cli.ts")];
    }
  }
  return [join(root, "out", "main", "cli.js")];
}

/** The Electron binary if it can run here, or the reason it cannot. */
function probeElectron() {
  let binary;
  try {
    // The electron package's main module *is* the binary's path; it throws when the binary
    // was never downloaded.
    binary = require("electron");
  } catch (error) {
    return { ok: false, reason: `binary not installed: ${firstLine(error)}` };
  }
  if (typeof binary !== "string" || !existsSync(binary)) {
    return { ok: false, reason: `binary not found at ${String(binary)}` };
  }
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { ok: false, reason: "no display: neither DISPLAY nor WAYLAND_DISPLAY is set" };
  }
  // --version loads the binary and its shared libraries without opening a window.
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 20_000 });
  if (probe.error) return { ok: false, reason: firstLine(probe.error) };
  if (probe.status !== 0) {
    return { ok: false, reason: firstLine(probe.stderr) || `exit code ${probe.status ?? probe.signal}` };
  }
  return { ok: true, binary };
}

function firstLine(value) {
  const text = value instanceof Error ? value.message : String(value ?? "");
  return text.trim().split("\n")[0]?.trim() ?? "";
}

/** Run `command args` with inherited stdio, pass Ctrl-C/SIGTERM on, exit with its code. */
function runAndExit(command, args, env = process.env) {
  const child = spawn(command, args, { cwd: root, stdio: "inherit", env });
  // Ctrl-C reaches the child directly (same process group): just outlive it, so that its own
  // shutdown runs and its exit code becomes ours. Signals aimed at this process are passed on.
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    console.error(`Could not start ${command}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** Headless defaults, unless the caller passed the same flag. */
function headlessArgs() {
  const defaults = [
    ["--host", "127.0.0.1"],
    ["--port", "8080"],
    ["--data-dir", join(homedir(), ".macaron")],
  ];
  const given = new Set(extraArgs.map((arg) => arg.split("=")[0]));
  return [...defaults.filter(([flag]) => !given.has(flag)).flat(), ...extraArgs];
}

const electron = serveOnly ? { ok: false } : probeElectron();
if (serveOnly) {
  runAndExit(process.execPath, [...headlessCommand(), ...extraArgs]);
} else if (electron.ok) {
  ensureDesktopBuild();
  // ELECTRON_RUN_AS_NODE in the environment would turn the app into a plain Node script.
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  runAndExit(electron.binary, [root, ...extraArgs], env);
} else {
  console.log(
    `Electron runtime not available on this machine (${electron.reason}); starting headless mode — open the URL below in a browser.`,
  );
  runAndExit(process.execPath, [...headlessCommand(), ...headlessArgs()]);
}
