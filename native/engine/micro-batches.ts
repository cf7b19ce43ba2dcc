/**
 * Whether a generation step of n tokens (one per sequence) decodes faster as one micro-batch or
 * as one micro-batch per sequence, learnt from the steps themselves.
 *
 * llama.cpp decodes a batch in micro-batches; with a KV cache per sequence (node-llama-cpp's
 * non-unified cache) a micro-batch takes only sequences whose ids increase by one in batch order
 * (llama_batch_allocr::split_equal), so the order in which decode-barrier.ts hands the tokens
 * over picks between the two: ascending ids make one, descending ids one per sequence. One is
 * usually faster, since the weights are read once, but not always: on the 2-core AMD EPYC VM
 * of 2026-12-06, the ~99M-parameter F16 bench model on one thread decoded a 2-token step in
 * ~24.6 ms as one micro-batch and ~18 ms as two, against ~8.7 ms for one token alone (llama.cpp's
 * matrix product for 2 columns is slower there than two matrix-vector products); 4 tokens took
 * ~36 ms either way. llama-server, which always puts its slots in order, gets the split only
 * when the two slots in use happen not to be adjacent.
 *
 * So each step size is tried both ways a few times, then the faster (mean of the recent steps)
 * is used, and the other is tried again every `recheckEvery` steps of that size while the two
 * are within `closeRatio` of each other (costs change with the context's length and the
 * machine's load), only every `farRecheckEvery` steps when the other is far slower: where one
 * micro-batch of 4 tokens takes 21.5 ms and four take 37.6 (a faster machine of 2026-12-05), a
 * recheck every 32 steps would cost 0.5 ms a step, every 512 steps 0.03. The cost of a step is
 * the time from its hand-over until its last sequence's token is back (decode and sampling).
 * `MACARON_ENGINE_MICRO_BATCHES=together|apart` fixes the choice (benchmarks, tests).
 */

export type MicroBatchMode = "together" | "apart";

const MODES: readonly MicroBatchMode[] = ["together", "apart"];

interface Cost {
  /** Exponential moving average of the step's cost (ms), NaN before the first. */
  mean: number;
  count: number;
}

export interface MicroBatchOptions {
  /** Steps of each size tried each way before choosing. */
  explore?: number;
  /** The way not chosen is tried once every this many steps of a size, while the means are close. */
  recheckEvery?: number;
  /** Means within this ratio are close. */
  closeRatio?: number;
  /** The way not chosen is tried once every this many steps of a size when it is far slower. */
  farRecheckEvery?: number;
  /** Weight of the newest step in the mean. */
  alpha?: number;
  /** A fixed choice instead of learning. */
  fixed?: MicroBatchMode | null;
}

export class MicroBatchChoice {
  private readonly costs = new Map<number, Record<MicroBatchMode, Cost>>();
  private readonly steps = new Map<number, number>();
  private readonly explore: number;
  private readonly recheckEvery: number;
  private readonly closeRatio: number;
  private readonly farRecheckEvery: number;
  private readonly alpha: number;
  private readonly fixed: MicroBatchMode | null;

  constructor(options: MicroBatchOptions = {}) {
    this.explore = options.explore ?? 3;
    this.recheckEvery = options.recheckEvery ?? 32;
    this.closeRatio = options.closeRatio ?? 1.2;
    this.farRecheckEvery = options.farRecheckEvery ?? 512;
    this.alpha = options.alpha ?? 0.25;
    this.fixed = options.fixed ?? null;
  }

  /** The way to decode a step of `tokens` tokens (one per sequence) now. */
  pick(tokens: number): MicroBatchMode {
    if (tokens < 2) return "together";
    if (this.fixed) return this.fixed;
    const costs = this.costsOf(tokens);
    const step = this.steps.get(tokens) ?? 0;
    this.steps.set(tokens, step + 1);
    // Each way `explore` times, alternating, before the means are trusted.
    const untried = MODES.find((mode) => costs[mode].count < this.explore);
    if (untried) return costs.together.count <= costs.apart.count ? "together" : "apart";
    const [best, other]: MicroBatchMode[] =
      costs.apart.mean < costs.together.mean ? ["apart", "together"] : ["together", "apart"];
    const close = costs[other!].mean <= costs[best!].mean * this.closeRatio;
    const every = close ? this.recheckEvery : this.farRecheckEvery;
    return step % every === every - 1 ? other! : best!;
  }

  /** A step of `tokens` tokens decoded `mode` took `ms`. */
  record(tokens: number, mode: MicroBatchMode, ms: number): void {
    if (tokens < 2 || this.fixed || !Number.isFinite(ms) || ms < 0) return;
    const cost = this.costsOf(tokens)[mode];
    cost.mean = cost.count === 0 ? ms : cost.mean + this.alpha * (ms - cost.mean);
    cost.count++;
  }

  /** The current means (ms) for a step size, for traces and tests. */
  means(tokens: number): Record<MicroBatchMode, number> {
    const costs = this.costsOf(tokens);
    return { together: costs.together.mean, apart: costs.apart.mean };
  }

  private costsOf(tokens: number): Record<MicroBatchMode, Cost> {
    let costs = this.costs.get(tokens);
    if (!costs) {
      costs = { together: { mean: NaN, count: 0 }, apart: { mean: NaN, count: 0 } };
      this.costs.set(tokens, costs);
    }
    return costs;
  }
}

/** `MACARON_ENGINE_MICRO_BATCHES`: "together" or "apart" fixes the choice; else it is learnt. */
export function microBatchSetting(env: NodeJS.ProcessEnv = process.env): MicroBatchMode | null {
  const value = env.MACARON_ENGINE_MICRO_BATCHES;
  return value === "together" || value === "apart" ? value : null;
}
