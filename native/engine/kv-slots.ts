import { LlamaChat, type ChatWrapper, type LlamaContext, type LlamaContextSequence } from "node-llama-cpp";
import type { KvPolicy } from "./protocol";

/**
 * The policy when a request names none. Chosen from bench/adapters.ts: "sequence-per-set" is
 * exact and, while a conversation alternates between a few adapter sets, each turn only
 * evaluates the tokens added since that set was last used (see the report in bench/results).
 */
export const DEFAULT_KV_POLICY: KvPolicy = "sequence-per-set";

/** Marks a sequence whose cached tokens were evaluated under more than one adapter set. */
const MIXED = "\u0000mixed";

/** One context sequence with its chat, and the adapter set its cached tokens were evaluated under. */
export interface KvSlot {
  readonly sequence: LlamaContextSequence;
  readonly chat: LlamaChat;
  /** adapterSetKey of the set every cached token was evaluated under, or MIXED. */
  evaluatedUnder: string;
  lastUsed: number;
}

/**
 * The context's sequences and what their KV caches hold, so that a turn under adapter set K
 * is evaluated according to its KvPolicy:
 *
 * - "reevaluate" (slot 0): if the cached tokens were evaluated under another set they are
 *   dropped and the whole history is evaluated again under K. Exact.
 * - "sequence-per-set": the slot whose cache was evaluated under K (else a free slot, else
 *   the least recently used one, cleared). Its cached prefix was computed under K, so reusing
 *   it is exact; only tokens added since that slot's last turn are evaluated. Exact.
 * - "activated" (slot 0): the cached prefix is kept whatever set it was evaluated under; only
 *   the tokens after the common prefix (the new user turn and the answer) are evaluated under
 *   K. Precisely: every token's keys/values are those of the turn that first evaluated it, so
 *   the result is exact only when the whole cached prefix was evaluated under K, or when the
 *   adapters touch nothing before the output layer (then keys/values do not depend on them).
 *   With adapters on attention or FFN weights it differs from a fresh evaluation.
 *
 * llama.cpp applies adapters per context, not per sequence: the caller sets K on the context
 * (LiveAdapters.apply) before evaluating on the slot returned here.
 */
export class KvSlots {
  private readonly slots: KvSlot[] = [];
  private clock = 0;

  constructor(
    private readonly context: LlamaContext,
    private readonly chatWrapper: ChatWrapper,
  ) {
    this.slots.push(this.createSlot());
  }

  /** How many sequences hold a cache now (tests, benchmarks). */
  get size(): number {
    return this.slots.length;
  }

  /**
   * The slot to evaluate the next turn on under set `key`, with whatever would be stale
   * under `policy` already cleared.
   */
  async acquire(key: string, policy: KvPolicy): Promise<KvSlot> {
    const slot = policy === "sequence-per-set" ? this.slotForSet(key) : this.slots[0]!;
    const cached = slot.sequence.contextTokens.length > 0;
    if (policy === "activated") {
      // From now on the cache mixes sets unless it was empty or already under K.
      if (cached && slot.evaluatedUnder !== key) slot.evaluatedUnder = MIXED;
      else slot.evaluatedUnder = key;
    } else {
      if (cached && slot.evaluatedUnder !== key) await slot.sequence.clearHistory();
      slot.evaluatedUnder = key;
    }
    slot.lastUsed = ++this.clock;
    return slot;
  }

  /** Drop every cached token: the next turn on any slot evaluates its whole history. */
  async clear(): Promise<void> {
    for (const slot of this.slots) await slot.sequence.clearHistory();
  }

  /** Free the chats (the context owns the sequences and frees them with itself). */
  dispose(): void {
    for (const slot of this.slots) slot.chat.dispose();
    this.slots.length = 0;
  }

  private slotForSet(key: string): KvSlot {
    const match =
      this.slots.find((s) => s.evaluatedUnder === key && s.sequence.contextTokens.length > 0) ??
      this.slots.find((s) => s.sequence.contextTokens.length === 0);
    if (match) return match;
    if (this.context.sequencesLeft > 0) {
      const slot = this.createSlot();
      this.slots.push(slot);
      return slot;
    }
    return this.slots.reduce((lru, s) => (s.lastUsed < lru.lastUsed ? s : lru));
  }

  private createSlot(): KvSlot {
    const sequence = this.context.getSequence();
    // chatWrapper given: resolving it costs 0.5–1 s of CPU (FACTS.md), done once per model.
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: this.chatWrapper });
    return { sequence, chat, evaluatedUnder: "", lastUsed: 0 };
  }
}
