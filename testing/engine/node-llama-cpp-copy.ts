/**
 * A copy of node-llama-cpp to build llama.cpp into, so that the app's own package (and every
 * other test and process on the machine) keeps what it has. The copy starts from the prebuilt
 * state whatever the app's package holds (`npm run setup` now builds llama.cpp into it): no
 * local build, no last-build record, no unpacked source clone; its dependencies (the prebuilt
 * @node-llama-cpp/* binaries among them) resolve from the app's node_modules.
 */
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { nodeLlamaCppDir } from "../../electron/core/engine/native-build";

/**
 * `node_modules/<folder>/node_modules/node-llama-cpp`, written afresh; returns the package folder.
 * `source: false` leaves out the bundled llama.cpp source too (35 MB): a copy that only runs
 * the prebuilt binaries.
 */
export function copyNodeLlamaCpp(
  folder: string,
  options: { source?: boolean; perProcess?: boolean } = {},
): { root: string; packageDir: string } {
  const modules = resolve(import.meta.dirname, "..", "..", "node_modules");
  // Tests take a folder of their own process (`<folder>-<pid>`): two test runs sharing one
  // node_modules (two clones, or a run beside another) must not write or remove each other's
  // copy. A killed run's copy is removed by the next run, once its process is gone.
  if (options.perProcess) {
    for (const name of readdirSync(modules)) {
      const pid = name.startsWith(`${folder}-`) ? Number(name.slice(folder.length + 1)) : NaN;
      if (Number.isInteger(pid) && pid !== process.pid && !alive(pid))
        rmSync(join(modules, name), { recursive: true, force: true });
    }
  }
  const root = join(modules, options.perProcess ? `${folder}-${process.pid}` : folder);
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
