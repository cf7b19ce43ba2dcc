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

/**
 * Dependencies that, inside the app, run its binary as Node with child_process.fork (Electron's
 * fork sets ELECTRON_RUN_AS_NODE; with the fuse off such a fork cannot start). node-llama-cpp
 * tests a binary in a fork of testBindingBinary.js before loading it (on Linux every prebuilt
 * binary; on Windows GPU builds); in a utility process, where `utilityProcess` is not available
 * to it, it falls back to child_process.fork. That runs in the engine, the build and the probe.
 */
function dependencyForks(): string[] {
  const file = "node_modules/node-llama-cpp/dist/bindings/utils/testBindingBinary.js";
  const source = readFileSync(join(root, file), "utf8");
  return /import \{ fork \} from "node:child_process"/.test(source) &&
    /type: "node",\s*fork\s*\}/.test(source)
    ? [file]
    : [];
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

  it("no code of the app starts its binary as plain Node (the node-child seam: utility processes)", () => {
    expect(runAsNodeUsers()).toEqual([]);
  });

  it("keeps runAsNode on only while a dependency still forks the app's binary as Node", () => {
    const forks = dependencyForks();
    // See the yml's comment: turning the fuse off with these left breaks the packaged engine.
    if (forks.length > 0) {
      expect(config.electronFuses?.runAsNode).toBe(true);
      expect(forks).toEqual(["node_modules/node-llama-cpp/dist/bindings/utils/testBindingBinary.js"]);
    } else expect(config.electronFuses?.runAsNode).toBe(false);
  });
});
