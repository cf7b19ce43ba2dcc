/** The options of one training run (trainAdapter, `npm run train`, the improvement cycle). */
import type { ToolCallFormat } from "../../common/engine-protocol";
import type { MaxLengthPolicy, TrainMethod } from "./tokenize-dataset";
import type { SystemPromptMix } from "./format-examples";

export interface TrainOptions {
  /** The base model GGUF. */
  base: string;
  /** The chat dataset (JSONL as the cloud export writes it). */
  data: string;
  /** Folder that receives ID.gguf and ID.json (created if needed). */
  out: string;
  id: string;
  /** Default: the parent's domain, else "chat". "ui" formats prompts with the UI-mode system prompt. */
  domain?: string;
  /** Default "sft". */
  method?: TrainMethod;
  /**
   * The adapter's own tool-call syntax, used to lay out tool-call examples and written to its
   * manifest; default: the parent manifest's toolCallFormat (the demo Agent has one), else the
   * chat template's own syntax.
   */
  toolFormat?: ToolCallFormat;
  /** A parent LoRA GGUF to continue from (its manifest beside it gives version, name, scale). */
  from?: string;
  parentVersion?: string;
  /** Default: 1.0.0, or the parent's version with its minor number raised. */
  version?: string;
  name?: string;
  description?: string;
  heldout?: string;
  /** Longest example in tokens; default (and at most) the base's context length. */
  maxLength?: number;
  /** Default "drop". */
  maxLengthPolicy?: MaxLengthPolicy;
  /**
   * The system turns training examples are laid out under (format-examples.ts SystemPromptMix):
   * "app" (default) the app's prompt only; "mixed" the app's, none and other clients' prompts,
   * so the adapter answers the same however a client asks. Not the default: on the cycle loop's
   * 80 coding corrections (8 epochs) "mixed" reached 0.39 of the format contract's coding cases
   * against 0.6+ with "app" (half the examples keep the app's prompt, so the app's own answers
   * get half the signal); bench v1-system measures what it buys through /v1. Held-out examples
   * keep the app's.
   */
  systemPrompts?: SystemPromptMix;
  /** Skip and count malformed lines instead of failing on the first. */
  skipMalformed?: boolean;
  rank?: number;
  alpha?: number;
  dropout?: number;
  lr?: number;
  epochs?: number;
  steps?: number;
  batchSize?: number;
  /** DPO's temperature; GRPO's weight of the KL to the reference. */
  beta?: number;
  /** GRPO: the importance ratio is clipped to [1 - clip, 1 + clip] (trainer default 0.2). */
  clip?: number;
  seed?: number;
  targets?: string[];
  /** Processes (torchrun) for data-parallel training; default 1. */
  nproc?: number;
  /** Torch threads per process (the trainer's default: 1). */
  threads?: number;
  /** Default "auto": CUDA or MPS when torch has it, else CPU. */
  device?: "cpu" | "cuda" | "mps" | "auto";
  maxSeconds?: number;
  checkpointEvery?: number;
  /** The interpreter (default: see locatePython). */
  python?: string;
  /** The trainer's environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}
