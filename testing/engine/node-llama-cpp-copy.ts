/**
 * A copy of node-llama-cpp to build llama.cpp into, so that the app's own package (and every
 * other test and process on the machine) keeps its prebuilt binaries. The copy holds no build
 * or source of its own; its dependencies resolve from the app's node_modules.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { nodeLlamaCppDir } from "../../electron/core/engine/native-build";

/** `node_modules/<folder>/node_modules/node-llama-cpp`, written afresh; returns the package folder. */
export function copyNodeLlamaCpp(folder: string): { root: string; packageDir: string } {
  const root = resolve(import.meta.dirname, "..", "..", "node_modules", folder);
  const packageDir = join(root, "node_modules", "node-llama-cpp");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(dirname(packageDir), { recursive: true });
  const source = nodeLlamaCppDir();
  const skip = ["llama/localBuilds", "llama/llama.cpp", "llama/lastBuild.json", ".temp"].map((p) =>
    join(source, p),
  );
  cpSync(source, packageDir, {
    recursive: true,
    filter: (path) => !skip.some((s) => path === s || path.startsWith(`${s}/`)),
  });
  return { root, packageDir };
}
