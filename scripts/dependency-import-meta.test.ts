import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { rewriteImportMeta } from "./dependency-import-meta.mjs";

const root = join(sep, "app");
const outDir = join(root, "out", "main");
const chunkUrl = pathToFileURL(join(outDir, "chunk-abc.js")).href;

/** Runs `code` (a function body) with import.meta.url as a chunk in out/main sees it. */
function runInChunk(code: string): unknown {
  const body = code.replaceAll("import.meta.url", "chunkUrl");
  return JSON.parse(runInNewContext(`JSON.stringify((() => {${body}})())`, { chunkUrl, URL }) as string);
}

describe("a dependency bundled into out/main keeps its own location", () => {
  it("import.meta.url in a node_modules file is that file's URL, seen from the chunk", () => {
    const file = join(root, "node_modules", "node-llama-cpp", "dist", "config.js");
    const out = rewriteImportMeta("return import.meta.url;", file, outDir)!;
    expect(runInChunk(out)).toBe(pathToFileURL(file).href);
    // Vite's query suffixes on ids do not reach the path.
    expect(
      runInChunk(rewriteImportMeta("return import.meta.url;", `${file}?commonjs-es-import`, outDir)!),
    ).toBe(pathToFileURL(file).href);
  });

  it("renames a module's own __dirname and __filename, which would clash with the chunk's shim", () => {
    const file = join(root, "node_modules", "pkg", "lib", "index.js");
    const code = [
      "const __dirname = new URL('.', import.meta.url).href;",
      "const __filename = import.meta.url;",
      "return [__dirname, __filename];",
    ].join("\n");
    const out = rewriteImportMeta(code, file, outDir)!;
    expect(out).not.toMatch(/\b__dirname\b|\b__filename\b/);
    expect(runInChunk(out)).toEqual([
      pathToFileURL(join(root, "node_modules", "pkg", "lib") + sep).href,
      pathToFileURL(file).href,
    ]);
  });

  it("works with Windows paths: Vite's ids with /, the output folder with \\", () => {
    const out = rewriteImportMeta(
      "const __dirname = 1; return [import.meta.url, options.__dirname];",
      "C:/app/node_modules/node-llama-cpp/dist/config.js",
      "C:\\app\\out\\main",
    )!;
    expect(out).toContain('new URL("../../node_modules/node-llama-cpp/dist/config.js", import.meta.url)');
    // The module's own binding is renamed, a property of the same name is not.
    expect(out).toContain("const __dirname_own = 1");
    expect(out).toContain("options.__dirname]");
  });

  it("leaves the app's own code, and files without import.meta.url, as they are", () => {
    expect(
      rewriteImportMeta("return import.meta.url;", join(root, "native", "engine", "main.ts"), outDir),
    ).toBeNull();
    expect(
      rewriteImportMeta("return __dirname;", join(root, "node_modules", "pkg", "a.js"), outDir),
    ).toBeNull();
  });
});
