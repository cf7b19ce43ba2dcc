import { withLock } from "lifecycle-utils";
import type { LlamaContext } from "node-llama-cpp";
import { isGgufError } from "../gguf/gguf-error";
import { assertAdapterFits, readGguf, type GgufFile } from "../gguf/reader";
import type { AdapterUse } from "../../common/engine-protocol";

/** An adapter that cannot be used with the loaded model; the message is meant for the user. */
export class AdapterError extends Error {
  override name = "AdapterError";
}

/**
 * The adapter set as llama.cpp will apply it: zero scales dropped (they add nothing), one
 * entry per file (scales of repeats summed, which is what applying it twice would do), sorted
 * by path, so that the same set always gets the same key and the same summation order.
 */
export function normalizeAdapters(adapters: readonly AdapterUse[] | undefined): AdapterUse[] {
  const byPath = new Map<string, number>();
  for (const { path, scale } of adapters ?? []) byPath.set(path, (byPath.get(path) ?? 0) + scale);
  return [...byPath]
    .filter(([, scale]) => scale !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, scale]) => ({ path, scale }));
}

/** A stable identity of a normalized adapter set ("" = the base model alone). */
export function adapterSetKey(normalized: readonly AdapterUse[]): string {
  return normalized.map((a) => `${a.scale}*${a.path}`).join("\n");
}

/** node-llama-cpp 3.21.1's internal live-switch entry point (not in its typings). */
interface ContextWithLoras {
  _setLoras(loras: { filePath: string; scale?: number }[]): Promise<void>;
}

/**
 * The LoRA set applied to one live context. llama.cpp's adapter set belongs to the context
 * (not to a sequence), so every evaluation runs under whatever was set last; callers set the
 * set they need right before evaluating.
 *
 * Adapter files are validated against the base model before llama.cpp sees them (its own error
 * is a generic "Failed to initialize LoRA adapter"). node-llama-cpp caches loaded adapters per
 * model (LlamaModel._getOrLoadLora), so each file is read once and stays loaded until the model
 * is disposed.
 */
export class LiveAdapters {
  private currentKey = "";
  private base: Promise<GgufFile> | null = null;
  private readonly validated = new Set<string>();

  constructor(
    private readonly context: LlamaContext,
    private readonly modelPath: string,
  ) {}

  /** Key of the set the context applies now. */
  get key(): string {
    return this.currentKey;
  }

  /**
   * Make the context apply `normalized` (from normalizeAdapters). A no-op when it already does.
   * Throws AdapterError, leaving the previous set in place, when a file cannot be used.
   */
  async apply(normalized: readonly AdapterUse[]): Promise<void> {
    const key = adapterSetKey(normalized);
    if (key === this.currentKey) return;
    for (const adapter of normalized) await this.validate(adapter.path);
    // Changing the set while a batch decodes on llama.cpp's worker thread crashes the process
    // (SIGSEGV/SIGBUS; ARCHITECTURE.md "Live adapter switches"). node-llama-cpp decodes under the [context, "context"] lock of lifecycle-utils
    // (LlamaContext.dispatchPendingBatch), so taking that lock — from the same lifecycle-utils
    // copy, see live-adapters.test.ts — orders the switch between batches. _setLoras is the
    // internal used for `createContext({lora})`; upstream has no public live switch
    // (https://github.com/withcatai/node-llama-cpp/blob/v3.21.1/src/evaluator/LlamaContext/LlamaContext.ts).
    await withLock([this.context, "context"], async () => {
      try {
        await (this.context as unknown as ContextWithLoras)._setLoras(
          normalized.map((a) => ({ filePath: a.path, scale: a.scale })),
        );
      } catch (error) {
        // _setLoras loads every file before it touches the context, so the old set still applies.
        throw new AdapterError(`llama.cpp could not load the adapter set: ${(error as Error).message}`);
      }
      this.currentKey = key;
    });
  }

  private async validate(path: string): Promise<void> {
    if (this.validated.has(path)) return;
    this.base ??= readGguf(this.modelPath);
    let base: GgufFile;
    try {
      base = await this.base;
    } catch (error) {
      this.base = null;
      throw new AdapterError(
        `Could not read the loaded model to check the adapter: ${(error as Error).message}`,
      );
    }
    try {
      await assertAdapterFits(path, base);
    } catch (error) {
      if (isGgufError(error)) throw new AdapterError(error.message);
      throw error;
    }
    this.validated.add(path);
  }
}
