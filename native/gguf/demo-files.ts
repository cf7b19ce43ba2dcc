import { BUILTIN_DOMAINS } from "../../common/domains";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ToolCallFormat } from "../../common/engine-protocol";

/**
 * Where the demo lives (a folder with base.gguf and adapters/): `resources/demo/base.gguf` and `resources/demo/adapters/` —
 * made by `npm run build-demo` (the project's PyTorch trainer) and committed, so users never
 * need Python. The packaged app ships the folder as an extra resource; MACARON_DEMO_DIR points
 * elsewhere (a build of one's own; tests point it at the fixtures, which have the same layout).
 */
export function demoDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MACARON_DEMO_DIR) return resolve(env.MACARON_DEMO_DIR);
  // Electron's packaged app: extraResources land in process.resourcesPath.
  const packaged = (process as { resourcesPath?: string }).resourcesPath;
  if (packaged && existsSync(join(packaged, "demo", "base.gguf"))) return join(packaged, "demo");
  return resolve(import.meta.dirname, "../../resources/demo");
}

/**
 * The tool-call syntax the demo specialists were trained to write, for their manifests'
 * `toolCallFormat` (resources/training/agent.train.jsonl: `{"tool":"set_timer","arguments":{"minutes":15}}`).
 * The engine then detects and grammar-constrains calls in that form; the tools are not
 * documented in the prompt, as the adapter was trained without such documentation.
 */
export const DEMO_TOOL_CALL_FORMATS: Readonly<Record<string, ToolCallFormat>> = {
  agent: {
    callPrefix: '{"tool":"',
    paramsPrefix: '","arguments":',
    callSuffix: "}",
    resultPrefix: "\n",
    resultSuffix: "\n",
    documented: false,
  },
};

/** The trained demo base model. */
export function demoBasePath(dir: string = demoDir()): string {
  return join(dir, "base.gguf");
}

/** The trained demo specialists (`<domain>.gguf` + `<domain>.json`). */
export function demoAdaptersDir(dir: string = demoDir()): string {
  return join(dir, "adapters");
}

/**
 * Makes sure `dir/demo.gguf` is the trained demo base and returns its path. A file with the
 * same size and bytes is kept; anything else (missing, damaged, an older demo) is replaced by
 * an atomic copy, so a crash halfway never leaves a partial model behind. Throws a clear error
 * when the app's own demo files are missing (a damaged installation).
 */
export async function ensureDemoModel(dir: string, demo: string = demoDir()): Promise<string> {
  const source = demoBasePath(demo);
  const path = join(dir, "demo.gguf");
  const [from, to] = await Promise.all([stat(source).catch(() => null), stat(path).catch(() => null)]);
  if (!from) throw new Error(`The demo model is missing from this installation (${source}).`);
  if (to?.size === from.size && (await sameBytes(source, path))) return path;
  await mkdir(dir, { recursive: true });
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await copyFile(source, temp);
  await rename(temp, path);
  return path;
}

async function sameBytes(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([readFile(a), readFile(b)]);
  return x.equals(y);
}

/** The specialists in the order the app lists them (then any others by name). */
const ORDER: readonly string[] = BUILTIN_DOMAINS;

/** The demo specialists' adapter files (their manifests lie beside them), in ORDER. */
export async function demoAdapterFiles(demo: string = demoDir()): Promise<string[]> {
  const dir = demoAdaptersDir(demo);
  const names = await readdir(dir).catch(() => [] as string[]);
  const rank = (n: string): number => {
    const i = ORDER.indexOf(n.replace(/\.gguf$/, ""));
    return i < 0 ? ORDER.length : i;
  };
  return names
    .filter((n) => n.endsWith(".gguf"))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((n) => join(dir, n));
}
