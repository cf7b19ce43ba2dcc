import { mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  DEMO_ADAPTERS,
  demoAdapterSpec,
  demoAdapterSpecFor,
  type DemoAdapterId,
  type FixtureArchitecture,
} from "./adapters";
import type { AdapterManifest } from "../../common/adapter-manifest";
import { sha256File } from "../../common/hashing";
import { readGguf } from "./reader";
import {
  TINY_MODEL_ARCHITECTURE,
  TINY_MODEL_NAME,
  TINY_MODEL_SHAPES,
  tinyModelSpec,
  type TinyModelSize,
} from "./tiny-model";
import { TINY_QWEN_NAMES, TINY_QWEN_SHAPES, tinyQwenSpec } from "./tiny-qwen";
import { writeGguf, type GgufWriteSpec } from "./writer";

/**
 * Writes the demo base model and the four demo adapters with their manifests: the offline
 * demo, the tests and the benchmarks all start from these files. Same input, same bytes.
 */

export interface FixtureAdapterPaths {
  id: DemoAdapterId;
  /** The adapter GGUF. */
  path: string;
  /** Its manifest JSON. */
  manifestPath: string;
  manifest: AdapterManifest;
}

export interface FixturePaths {
  basePath: string;
  baseSha256: string;
  adaptersDir: string;
  adapters: FixtureAdapterPaths[];
}

export interface FixtureOptions {
  /** "tiny" (default) writes base.gguf; other sizes write base-<size>.gguf (llama only). */
  size?: TinyModelSize;
  /**
   * "llama" (default): the demo base above. "qwen3" / "qwen3moe": the tiny bases of the Tall
   * base's family (tiny-qwen.ts), written as `base-<arch>.gguf` with their demo adapters in
   * `adapters-<arch>/`.
   */
  architecture?: FixtureArchitecture;
}

function baseFileName(size: TinyModelSize): string {
  return size === "tiny" ? "base.gguf" : `base-${size}.gguf`;
}

/**
 * Writes `base.gguf` (or `base-<size>.gguf`), `adapters/<id>.gguf` and `adapters/<id>.json`
 * into `outDir` (created if needed) and returns their paths. For non-tiny sizes the adapters
 * fit that base and are written to `adapters-<size>/`.
 */
export async function writeFixtures(outDir: string, options: FixtureOptions = {}): Promise<FixturePaths> {
  const architecture = options.architecture ?? "llama";
  if (architecture !== "llama") {
    if (options.size && options.size !== "tiny") {
      throw new Error(`the ${architecture} fixture comes in one size (tiny), not "${options.size}"`);
    }
    const adaptersDir = join(outDir, `adapters-${architecture}`);
    await mkdir(adaptersDir, { recursive: true });
    const basePath = join(outDir, `base-${architecture}.gguf`);
    await writeGguf(basePath, tinyQwenSpec(architecture));
    const base = {
      architecture,
      embeddingLength: TINY_QWEN_SHAPES[architecture].embedding,
      baseName: TINY_QWEN_NAMES[architecture],
      baseSha256: await sha256File(basePath),
    };
    const adapters = await writeAdapters(adaptersDir, base, (id) => demoAdapterSpecFor(id, architecture));
    return { basePath, baseSha256: base.baseSha256, adaptersDir, adapters };
  }
  const size = options.size ?? "tiny";
  const shape = TINY_MODEL_SHAPES[size];
  const adaptersDir = join(outDir, size === "tiny" ? "adapters" : `adapters-${size}`);
  await mkdir(adaptersDir, { recursive: true });

  const basePath = join(outDir, baseFileName(size));
  await writeGguf(basePath, tinyModelSpec(size));
  const baseSha256 = await sha256File(basePath);
  const base = {
    architecture: TINY_MODEL_ARCHITECTURE,
    embeddingLength: shape.embedding,
    baseName: TINY_MODEL_NAME,
    baseSha256,
  };
  const adapters = await writeAdapters(adaptersDir, base, (id) => demoAdapterSpec(id, size));
  return { basePath, baseSha256, adaptersDir, adapters };
}

/** The four demo adapters and their manifests for the base described by `base`. */
async function writeAdapters(
  adaptersDir: string,
  base: AdapterManifest["base"],
  spec: (id: DemoAdapterId) => GgufWriteSpec,
): Promise<FixtureAdapterPaths[]> {
  const adapters: FixtureAdapterPaths[] = [];
  for (const demo of DEMO_ADAPTERS) {
    const path = join(adaptersDir, `${demo.id}.gguf`);
    await writeGguf(path, spec(demo.id));
    const manifest: AdapterManifest = {
      id: demo.id,
      name: demo.name,
      domain: demo.domain,
      version: "1.0.0",
      description: demo.description,
      sha256: await sha256File(path),
      sizeBytes: (await stat(path)).size,
      base: { ...base },
      defaultScale: demo.defaultScale,
      routingExamples: [...demo.routingExamples],
      lineage: { parent: null, trainedFrom: "generated fixture" },
    };
    const manifestPath = join(adaptersDir, `${demo.id}.json`);
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    adapters.push({ id: demo.id, path, manifestPath, manifest });
  }
  return adapters;
}

/**
 * Makes sure `dir/demo.gguf` holds the tiny demo model and returns its path. An existing file
 * is kept when it reads as a valid GGUF (the model is deterministic, so regenerating would give
 * the same bytes); a damaged one is replaced. Written atomically, so concurrent callers and a
 * crash halfway never leave a partial model behind.
 */
export async function ensureFixtureModel(dir: string): Promise<string> {
  const path = join(dir, "demo.gguf");
  try {
    await readGguf(path);
    return path;
  } catch {
    // Missing or damaged: (re)write it below.
  }
  await mkdir(dir, { recursive: true });
  await writeGguf(path, tinyModelSpec("tiny"));
  return path;
}
