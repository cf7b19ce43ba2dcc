/**
 * A copy of node-llama-cpp to build llama.cpp into, so that the app's own package (and every
 * other test and process on the machine) keeps what it has. The copy starts from the prebuilt
 * state whatever the app's package holds (`npm run setup` now builds llama.cpp into it): no
 * local build, no last-build record, no unpacked source clone; its dependencies (the prebuilt
 * @node-llama-cpp/* binaries among them) resolve from the app's node_modules.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { nodeLlamaCppDir } from "../../electron/core/engine/native-build";

/**
 * `node_modules/<folder>/node_modules/node-llama-cpp`, written afresh; returns the package folder.
 * `source: false` leaves out the bundled llama.cpp source too (35 MB): a copy that only runs
 * the prebuilt binaries.
 */
export function copyNodeLlamaCpp(
  folder: string,
  options: { source?: boolean } = {},
): { root: string; packageDir: string } {
  const root = resolve(import.meta.dirname, "..", "..", "node_modules", folder);
  const packageDir = join(root, "node_modules", "node-llama-cpp");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(dirname(packageDir), { recursive: true });
  const source = nodeLlamaCppDir();
  const skip = [
    "llama/localBuilds",
    "llama/llama.cpp",
    "llama/lastBuild.json",
    ".temp",
    ...(options.source === false ? ["llama/gitRelease.bundle"] : []),
  ].map((p) => join(source, p));
  cpSync(source, packageDir, {
    recursive: true,
    filter: (path) => !skip.some((s) => path === s || path.startsWith(`${s}/`)),
  });
  return { root, packageDir };
}
