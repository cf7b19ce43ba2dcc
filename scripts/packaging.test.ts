/**
 * electron-builder.yml, checked without packaging (Electron's zip cannot be downloaded here):
 * the file is valid for electron-builder 26 and sets the Electron fuses that keep other code
 * from running inside the signed app.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
// electron-builder's own dependencies: its YAML parser and its config validator.
const require = createRequire(join(root, "node_modules", "app-builder-lib", "package.json"));
const yaml = require("js-yaml") as { load(text: string): unknown };
const { validateConfiguration } = require("app-builder-lib/out/util/config/config") as {
  validateConfiguration: (config: unknown, debugLogger: { isEnabled: boolean }) => Promise<void>;
};

interface BuilderConfig {
  asar?: boolean;
  electronFuses?: Record<string, boolean>;
}

const config = yaml.load(readFileSync(join(root, "electron-builder.yml"), "utf8")) as BuilderConfig;

/** Product files of the main process that start the app's own binary as plain Node. */
function runAsNodeUsers(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ts$/.test(name) && !/\.test\.ts$/.test(name))
        if (readFileSync(path, "utf8").includes("ELECTRON_RUN_AS_NODE")) found.push(path.slice(root.length));
    }
  };
  walk(join(root, "electron"));
  return found.sort();
}

describe("electron-builder.yml", () => {
  it("is a valid electron-builder 26 configuration", async () => {
    await expect(validateConfiguration(config, { isEnabled: false })).resolves.toBeUndefined();
  });

  it("sets the Electron fuses", () => {
    const fuses = config.electronFuses;
    expect(fuses).toBeDefined();
    expect(config.asar).toBe(true);
    expect(fuses).toMatchObject({
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      loadBrowserProcessSpecificV8Snapshot: false,
    });
  });

  it("keeps runAsNode on only while the main process still runs itself as Node", () => {
    const users = runAsNodeUsers();
    // Each of these breaks in the packaged app once the fuse is off; see the yml's comment.
    if (users.length > 0) {
      expect(config.electronFuses?.runAsNode).toBe(true);
      expect(users).toEqual([
        "electron/core/contract/sandbox/sandbox.ts",
        "electron/core/engine/native-build.ts",
        "electron/core/engine/native-cache.ts",
      ]);
    } else expect(config.electronFuses?.runAsNode).toBe(false);
  });
});
