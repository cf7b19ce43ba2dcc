/**
 * `npm run setup`'s "build llama.cpp for this machine" step, with the app's own build code
 * (NativeBuild through native-cache.ts), run as
 *
 *   node --import tsx electron/core/engine/native-build-cli.ts [--package-dir DIR] [--no-cache] [--gpu false|auto]
 *
 * Prints a line per stage and per 10% (the compiler's output goes to a log file, named when the
 * build fails), and one closing line that says which binaries the engine will run. It exits 0
 * when it could not build too: the prebuilt binaries still work, so set-up goes on.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { nodeLlamaCppDir, removeLocalBuilds } from "./native-build";
import { defaultCacheRoot, ensureNativeBuild } from "./native-cache";

const FALLBACK = "the engine uses node-llama-cpp's prebuilt binaries";

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "package-dir": { type: "string" },
      "no-cache": { type: "boolean", default: false },
      gpu: { type: "string" },
    },
  });
  if (values.gpu !== undefined && values.gpu !== "false" && values.gpu !== "auto") {
    console.error("--gpu is false or auto");
    return 2;
  }
  const packageDir = resolve(values["package-dir"] ?? nodeLlamaCppDir());
  const cacheRoot = values["no-cache"] ? null : defaultCacheRoot(process.env);
  const print = (line: string) => console.log(`setup: ${line}`);
  try {
    const result = await ensureNativeBuild({
      packageDir,
      env: process.env,
      cacheRoot,
      gpu: values.gpu === undefined ? undefined : values.gpu === "auto" ? "auto" : false,
      print,
    });
    if (result.outcome === "fallback") {
      print(`llama.cpp not built for this machine (${result.reason}); ${FALLBACK}`);
      if (result.logFile) print(`build log: ${result.logFile}`);
    } else {
      const backend = result.gpu === false ? "cpu" : "gpu auto";
      const how = result.outcome === "cached" ? `from the cache ${cacheRoot ?? ""}` : "compiled";
      print(`llama.cpp built for this machine (${backend}, ${result.key}), ${how} in ${result.seconds} s`);
    }
  } catch (err) {
    // Whatever went wrong half-way (a copy, a probe): no half-installed build stays behind.
    await removeLocalBuilds(packageDir).catch(() => undefined);
    print(`llama.cpp not built for this machine (${(err as Error).message}); ${FALLBACK}`);
  }
  return 0;
}

if (import.meta.filename === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
