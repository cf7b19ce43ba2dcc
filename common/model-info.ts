/**
 * Summary of a GGUF file as read by native/gguf, shown before and after loading: native/gguf
 * builds it, electron/api re-exports it to the UI.
 */
import { z } from "zod";

export const ModelInfo = z.object({
  path: z.string(),
  name: z.string(),
  architecture: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  contextLength: z.number().int().nonnegative(),
  embeddingLength: z.number().int().nonnegative(),
  blockCount: z.number().int().nonnegative(),
  /** True for the demo model (the tiny trained one, or the untrained test fixture). */
  isDemo: z.boolean(),
});
export type ModelInfo = z.infer<typeof ModelInfo>;
