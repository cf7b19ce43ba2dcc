// A dependency bundled into out/main keeps its own location (electron.vite.config.ts).
import { posix } from "node:path";

/**
 * `code` of the module `id` as bundled into a chunk in `outDir`: `import.meta.url` in a file of
 * node_modules becomes the URL that file had, found from the chunk's own URL, so that the paths
 * a package computes from it (node-llama-cpp's llama/ folder and binaries, its package.json)
 * are the same as unbundled, in a checkout or in the packaged app (out/ and node_modules/ side
 * by side). A module's own `const __dirname = …` (or `__filename`) is renamed: it would clash
 * with the bundler's CommonJS shim of that name in the chunk. Null: nothing to change.
 */
export function rewriteImportMeta(code, id, outDir) {
  // Vite's ids use "/" on every system (C:/… on Windows); the output folder is a native path.
  const file = id.split("?")[0].replaceAll("\\", "/");
  if (!file.includes("/node_modules/") || !code.includes("import.meta.url")) return null;
  const from = posix.relative(outDir.replaceAll("\\", "/"), file);
  let out = code.replaceAll("import.meta.url", `new URL(${JSON.stringify(from)}, import.meta.url).href`);
  for (const name of ["__dirname", "__filename"])
    if (new RegExp(`\\b(const|let|var)\\s+${name}\\b`).test(out))
      // The name itself, not a property of that name (`obj.__dirname`).
      out = out.replace(new RegExp(`(?<![.$\\w])${name}\\b`, "g"), `${name}_own`);
  return out;
}

/** The Vite (Rollup/Rolldown) plugin for the main process bundles written to `outDir`. */
export function dependencyImportMeta(outDir) {
  return {
    name: "macaron:dependency-import-meta",
    transform(code, id) {
      const out = rewriteImportMeta(code, id, outDir);
      return out === null ? null : { code: out, map: null };
    },
  };
}
