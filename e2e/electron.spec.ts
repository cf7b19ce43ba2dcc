/**
 * The desktop app itself, driven through Playwright's Electron support. Needs the Electron
 * binary, which cannot be downloaded on the dev machines: there this file reports itself as
 * skipped with the reason, and the browser suites (headless mode) cover the same UI.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { _electron as electron, expect, test, type ElectronApplication } from "@playwright/test";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Why the Electron app cannot be launched here, or null when it can. */
function electronUnavailable(): string | null {
  let binary: unknown;
  try {
    // The electron package's main export is the binary's path; it throws when none was installed.
    binary = createRequire(join(root, "package.json"))("electron");
  } catch (error) {
    return `Electron binary not installed on this machine (${(error as Error).message.split("\n")[0]})`;
  }
  if (typeof binary !== "string" || !existsSync(binary)) {
    return `Electron binary not installed on this machine (no file at ${String(binary)})`;
  }
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return "Electron needs a display on Linux (DISPLAY/WAYLAND_DISPLAY unset; run under xvfb-run)";
  }
  return null;
}

const unavailable = electronUnavailable();

test.describe("Electron app", () => {
  test.skip(unavailable !== null, unavailable ?? "");

  let app: ElectronApplication | undefined;
  let dataDir: string | undefined;

  test.afterEach(async () => {
    await app?.close();
    app = undefined;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("opens the window with the conversation list and the message box, locked down", async () => {
    expect(existsSync(join(root, "out/main/index.js")), "run `npm run build` first").toBe(true);
    dataDir = mkdtempSync(join(tmpdir(), "macaron-electron-"));
    // Playwright wants defined values only; drop variables that would change how the app runs.
    const env: Record<string, string> = { MACARON_DATA_DIR: dataDir, MACARON_ENGINE_THREADS: "1" };
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && key !== "ELECTRON_RUN_AS_NODE" && key !== "ELECTRON_RENDERER_URL") {
        env[key] ??= value;
      }
    }
    app = await electron.launch({ args: ["."], cwd: root, env });
    const window = await app.firstWindow();

    await expect(window.getByRole("navigation", { name: "Conversations" })).toBeVisible();
    await expect(window.getByRole("textbox", { name: "Message" })).toBeVisible();

    // The page sees the bridge and nothing of Node.
    const page = await window.evaluate(async () => {
      const w = window as unknown as Record<string, unknown> & {
        macaron: { invoke(method: string, input: unknown): Promise<unknown> };
      };
      return {
        bridge: Object.keys(w.macaron).sort(),
        require: typeof w.require,
        process: typeof w.process,
        status: await w.macaron.invoke("models.status", {}),
        unknown: await w.macaron.invoke("no.such.method", {}),
      };
    });
    expect(page.bridge).toEqual(["invoke", "openExternal", "pickModelFile", "subscribe"]);
    expect(page.require).toBe("undefined");
    expect(page.process).toBe("undefined");
    expect(page.status).toMatchObject({ ok: true, value: { state: expect.any(String) as unknown } });
    expect(page.unknown).toMatchObject({ ok: false, error: { code: "unknown_method" } });

    // Core keeps its database in the data dir the app was given.
    const userData = await app.evaluate(({ app: electronApp }) => electronApp.getPath("userData"));
    expect(userData).toBe(dataDir);
  });
});
