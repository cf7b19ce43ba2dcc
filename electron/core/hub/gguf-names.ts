/**
 * node-llama-cpp's GGUF quantization names and file types, imported the first time the hub
 * needs them. Core uses node-llama-cpp for nothing else (the engine process runs it), and
 * importing it costs ~0.3 s of CPU: on the 2-core VM the headless server reached "listening"
 * ~0.23 s sooner without it in core's start (bench/README.md, "parallel"), since core's start
 * runs beside the engine's own.
 */
export interface GgufNames {
  /** "Q4_K_M", "F16", … (upper case). */
  readonly quants: readonly string[];
  readonly quantSet: ReadonlySet<string>;
  /** `general.file_type` values to their names ("MOSTLY_Q4_K_M", …). */
  readonly fileTypes: Readonly<Record<number, string | undefined>>;
}

let names: Promise<GgufNames> | null = null;

export function ggufNames(): Promise<GgufNames> {
  names ??= import("node-llama-cpp").then(({ ggufFileQuantNames, GgufFileType }) => {
    const quants = [...ggufFileQuantNames].map((q) => q.toUpperCase());
    return {
      quants,
      quantSet: new Set(quants),
      fileTypes: GgufFileType as unknown as Record<number, string | undefined>,
    };
  });
  return names;
}
