/**
 * Whether a generation step (one token per sequence) decodes faster in llama.cpp's own
 * micro-batches or as one micro-batch per sequence, learnt from the steps themselves, per shape
 * of step: its runs of consecutive sequence ids ("4": sequences 0–3; "2+1": 0, 1 and 3).
 *
 * llama.cpp decodes a batch in micro-batches; with a KV cache per sequence (node-llama-cpp's
 * non-unified cache) a micro-batch takes only sequences whose ids increase by one in batch order
 * (llama_batch_allocr::split_equal), so the order in which decode-barrier.ts hands the tokens
 * over picks between the two: ascending consecutive ids make one micro-batch, descending ids one
 * per sequence (sequences 0, 1 and 3 ascending make two: {0, 1} and {3}). One is usually faster,
 * since the weights are read once, but not always: on the
 * 2-core AMD EPYC VM of 2026-12-06, the ~99M-parameter F16 bench model on one thread decoded a
 * 2-token step in ~24.6 ms as one micro-batch and ~18 ms as two, against ~8.7 ms for one token
 * alone (llama.cpp's matrix product for 2 columns is slower there than two matrix-vector
 * products); 4 tokens took ~36 ms either way. llama-server with `--parallel N` (a cache per slot)
 * puts its slots in order, so it gets the split only when the two slots in use are not adjacent.
 *
 * So each step size is tried both ways a few times, then the faster is used: the median of that
 * way's recent steps, so that one slow step (a garbage collection, a wait for the context lock)
 * does not decide. The other way is tried again every `recheckEvery` steps of that size while
 * the two are within `closeRatio` of each other (costs change with the context's length and the
 * machine's load), only every `farRecheckEvery` steps when it is far slower: where one
 * micro-batch of 4 tokens takes 21.5 ms and four take 37.6 (a faster machine of 2026-12-05), a
 * recheck every 32 steps would cost 0.5 ms a step, every 512 steps 0.03. A recheck faster than
 * the chosen way's median is taken at its word: that way is used from the next step, and its
 * own steps then confirm it or hand back. The cost of a step is the time from its hand-over
 * until its last sequence's token is back (decode and sampling); decode-barrier.ts records only
 * steps that had the batch to themselves (no prompt chunk queued beside them).
 * `MACARON_ENGINE_MICRO_BATCHES=together|apart` fixes the choice (benchmarks, tests).
 */

import { median } from "./decode-trace";

export type MicroBatchMode = "together" | "apart";

const MODES: readonly MicroBatchMode[] = ["together", "apart"];

export interface MicroBatchOptions {
  /** Steps of each size tried each way before choosing. */
  explore?: number;
  /** The way not chosen is tried once every this many steps of a size, while the two are close. */
  recheckEvery?: number;
  /** Medians within this ratio are close. */
  closeRatio?: number;
  /** The way not chosen is tried once every this many steps of a size when it is far slower. */
  farRecheckEvery?: number;
  /** Recent steps kept per way and size. */
  window?: number;
  /** A fixed choice instead of learning. */
  fixed?: MicroBatchMode | null;
}

/**
 * A step's shape: its runs of consecutive sequence ids, e.g. "2+1" (a number n: one run of n).
 * Steps of one token, or of runs of one only, have nothing to choose: both ways are the same.
 */
export type StepShape = number | string;

/** The shape of a step on these sequence ids, in ascending order: "4", "2+1", "1+1". */
export function stepShape(sortedIds: readonly number[]): string {
  const runs: number[] = [];
  sortedIds.forEach((id, i) => {
    if (i > 0 && id === sortedIds[i - 1]! + 1) runs[runs.length - 1]!++;
    else runs.push(1);
  });
  return runs.join("+");
}

/** Whether a step of this shape can go two ways (some run has two sequences or more). */
export function hasChoice(shape: StepShape): boolean {
  return String(shape)
    .split("+")
    .some((run) => Number(run) >= 2);
}

/** Per step shape: recent costs (ms) of each way, oldest first, and the steps picked so far. */
interface SizeRecord {
  together: number[];
  apart: number[];
  steps: number;
}

export class MicroBatchChoice {
  private readonly sizes = new Map<string, SizeRecord>();
  private readonly explore: number;
  private readonly recheckEvery: number;
  private readonly closeRatio: number;
  private readonly farRecheckEvery: number;
  private readonly window: number;
  private readonly fixed: MicroBatchMode | null;

  constructor(options: MicroBatchOptions = {}) {
    this.explore = options.explore ?? 3;
    this.recheckEvery = options.recheckEvery ?? 32;
    this.closeRatio = options.closeRatio ?? 1.2;
    this.farRecheckEvery = options.farRecheckEvery ?? 512;
    this.window = Math.max(options.window ?? 8, this.explore);
    this.fixed = options.fixed ?? null;
  }

  /** The way to decode a step of this shape (one token per sequence) now. */
  pick(shape: StepShape): MicroBatchMode {
    if (!hasChoice(shape)) return "together";
    if (this.fixed) return this.fixed;
    const size = this.sizeOf(shape);
    const step = size.steps++;
    // Each way `explore` times, alternating, before the medians are trusted.
    if (this.exploring(size)) return size.together.length <= size.apart.length ? "together" : "apart";
    const [best, other, medians] = ranked(size);
    const close = medians[other] <= medians[best] * this.closeRatio;
    const every = close ? this.recheckEvery : this.farRecheckEvery;
    return step % every === every - 1 ? other : best;
  }

  /** A step of this shape decoded `mode` took `ms`. */
  record(shape: StepShape, mode: MicroBatchMode, ms: number): void {
    if (!hasChoice(shape) || this.fixed || !Number.isFinite(ms) || ms < 0) return;
    const size = this.sizeOf(shape);
    if (!this.exploring(size)) {
      const [best, , medians] = ranked(size);
      if (mode !== best && ms < medians[best]) {
        // A recheck beat the way in use: its old steps no longer tell how it does now.
        size[mode] = [ms];
        return;
      }
    }
    size[mode].push(ms);
    if (size[mode].length > this.window) size[mode].shift();
  }

  /** The median of the recent steps (ms) of each way for a step shape, NaN before any. */
  medians(shape: StepShape): Record<MicroBatchMode, number> {
    const size = this.sizeOf(shape);
    return { together: median(size.together), apart: median(size.apart) };
  }

  private exploring(size: SizeRecord): boolean {
    return MODES.some((mode) => size[mode].length < this.explore);
  }

  private sizeOf(shape: StepShape): SizeRecord {
    const key = String(shape);
    let size = this.sizes.get(key);
    if (!size) {
      size = { together: [], apart: [], steps: 0 };
      this.sizes.set(key, size);
    }
    return size;
  }
}

/** Faster way first (ties: together), with both medians. */
function ranked(size: SizeRecord): [MicroBatchMode, MicroBatchMode, Record<MicroBatchMode, number>] {
  const medians = { together: median(size.together), apart: median(size.apart) };
  return medians.apart < medians.together ? ["apart", "together", medians] : ["together", "apart", medians];
}

/** `MACARON_ENGINE_MICRO_BATCHES`: "together" or "apart" fixes the choice; else it is learnt. */
export function microBatchSetting(env: NodeJS.ProcessEnv = process.env): MicroBatchMode | null {
  const value = env.MACARON_ENGINE_MICRO_BATCHES;
  return value === "together" || value === "apart" ? value : null;
}
