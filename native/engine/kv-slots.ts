import {
  LlamaChat,
  type ChatWrapper,
  type LlamaContext,
  type LlamaContextSequence,
  type Token,
} from "node-llama-cpp";
import type { KvPolicy } from "../../common/engine-protocol";
import { sharedPrefix } from "./kv-state-store";

/**
 * The policy when a request names none. Chosen from bench/adapters.ts: "sequence-per-set" is
 * exact and, while a conversation alternates between a few adapter sets, each turn only
 * evaluates the tokens added since that set was last used (see the report in bench/results).
 */
export const DEFAULT_KV_POLICY: KvPolicy = "sequence-per-set";

/** Marks a sequence whose cached tokens were evaluated under more than one adapter set. */
export const MIXED = "\u0000mixed";

/** The session of requests that name none (the /v1 endpoints, background work). */
export const ANONYMOUS = "";

/** One context sequence with its chat, and whose tokens its KV cache holds. */
export interface KvSlot {
  readonly sequence: LlamaContextSequence;
  readonly chat: LlamaChat;
  /** The conversation (GenerateOptions.sessionKey) whose tokens the cache holds. */
  sessionKey: string;
  /** adapterSetKey of the set every cached token was evaluated under, or MIXED. */
  evaluatedUnder: string;
  lastUsed: number;
  /** The cache changed since it was last saved to disk. */
  dirty: boolean;
  /** A generation runs on it (from acquire until release): no other request may take it. */
  inUse: boolean;
}

/** Called before a slot's cache is dropped for another conversation or set (to save it). */
export type BeforeEvict = (slot: KvSlot) => Promise<void>;

/**
 * The context's sequences and what their KV caches hold: which conversation (session key) and
 * under which adapter set. A turn of session S under adapter set K is evaluated according to
 * its KvPolicy:
 *
 * - "reevaluate": S's sequence; if its cached tokens were evaluated under another set they
 *   are dropped and the whole history is evaluated again under K. Exact.
 * - "sequence-per-set": the sequence whose cache holds S under K. Its cached prefix was computed
 *   under K, so reusing it is exact; only tokens added since that turn are evaluated. Exact.
 * - "activated": S's sequence; the cached prefix is kept whatever set it was evaluated under;
 *   only the tokens after the common prefix (the new user turn and the answer) are evaluated
 *   under K. Precisely: every token's keys/values are those of the turn that first evaluated
 *   it, so the result is exact only when the whole cached prefix was evaluated under K, or when
 *   the adapters touch nothing before the output layer (then keys/values do not depend on
 *   them). With adapters on attention or FFN weights it differs from a fresh evaluation.
 *
 * When no sequence holds what a turn needs it gets an empty one, a new one while the context
 * has sequences left, else the least recently used one (after `beforeEvict`, which saves it).
 * Requests without a session share ANONYMOUS, which behaves as one more conversation; when
 * they evict, they take an ANONYMOUS sequence before a conversation's (the app's chat keeps its
 * caches while API traffic runs, unless every other sequence is in use).
 *
 * Generations run concurrently (AdapterGroups), so a slot is held from acquire() until
 * release(): a second request of the same session then gets another sequence (for ANONYMOUS,
 * the free one whose cache shares the longest prefix with its prompt). The caller admits at
 * most as many generations as the context has sequences, so a free slot always exists.
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
    private readonly beforeEvict: BeforeEvict = async () => {},
    /** Called when a request finds no sequence left and evicts a cache (ModelSession grows then). */
    private readonly onFull: () => void = () => {},
  ) {
    this.slots.push(this.createSlot());
  }

  /** How many sequences hold a cache now (tests, benchmarks). */
  get size(): number {
    return this.slots.length;
  }

  /** The slots, for saving them all (e.g. before the model is unloaded). */
  get all(): readonly KvSlot[] {
    return this.slots;
  }

  /**
   * The slot to evaluate session `sessionKey`'s next turn on under set `key`, with whatever
   * would be stale under `policy` already cleared. An empty cache means nothing was reusable.
   */
  async acquire(
    key: string,
    policy: KvPolicy,
    sessionKey: string = ANONYMOUS,
    prompt: readonly Token[] = [],
  ): Promise<KvSlot> {
    const slot = await this.slotFor(sessionKey, policy === "sequence-per-set" ? key : null, prompt);
    const cached = slot.sequence.contextTokens.length > 0;
    if (policy === "activated") {
      // From now on the cache mixes sets unless it was empty or already under K.
      if (cached && slot.evaluatedUnder !== key) slot.evaluatedUnder = MIXED;
      else slot.evaluatedUnder = key;
    } else {
      if (cached && slot.evaluatedUnder !== key) await this.evict(slot);
      slot.evaluatedUnder = key;
    }
    slot.lastUsed = ++this.clock;
    return slot;
  }

  /** The generation on `slot` is over: other requests may take it. */
  release(slot: KvSlot): void {
    slot.inUse = false;
  }

  /** How many sequences generations hold now (tests, benchmarks). */
  get inUse(): number {
    return this.slots.filter((s) => s.inUse).length;
  }

  /** Drop every cached token: the next turn on any slot evaluates its whole history. */
  async clear(): Promise<void> {
    for (const slot of this.slots) {
      await slot.sequence.clearHistory();
      slot.dirty = false;
    }
  }

  /** Free the chats (the context owns the sequences and frees them with itself). */
  /** Empty every cache that holds `sessionKey`; the slots go back to the anonymous pool. */
  async forget(sessionKey: string): Promise<void> {
    for (const slot of this.slots) {
      if (slot.sessionKey !== sessionKey) continue;
      await slot.sequence.clearHistory();
      slot.sessionKey = ANONYMOUS;
      slot.dirty = false;
    }
  }

  dispose(): void {
    for (const slot of this.slots) slot.chat.dispose();
    this.slots.length = 0;
  }

  /**
   * `set` null: any set (the policies that keep one sequence per session). The slot is marked in
   * use before the first await, so concurrent acquires never pick the same one.
   */
  private async slotFor(sessionKey: string, set: string | null, prompt: readonly Token[]): Promise<KvSlot> {
    const free = this.slots.filter((s) => !s.inUse);
    const holders = free.filter(
      (s) =>
        s.sessionKey === sessionKey &&
        s.sequence.contextTokens.length > 0 &&
        (set === null || s.evaluatedUnder === set),
    );
    const reused =
      holders.length > 1 && prompt.length > 0
        ? holders.reduce((a, s) => (overlap(s, prompt) > overlap(a, prompt) ? s : a))
        : holders[0];
    const match = reused ?? free.find((s) => s.sequence.contextTokens.length === 0);
    if (match) {
      match.inUse = true;
      match.sessionKey = sessionKey;
      return match;
    }
    if (this.context.sequencesLeft > 0) {
      const slot = this.createSlot(sessionKey);
      slot.inUse = true;
      this.slots.push(slot);
      return slot;
    }
    this.onFull();
    // An API request evicts another API cache before a conversation's.
    const anonymous = free.filter((s) => s.sessionKey === ANONYMOUS);
    const pool = sessionKey === ANONYMOUS && anonymous.length > 0 ? anonymous : free;
    if (pool.length === 0) throw new Error("Every sequence is in use: more generations than sequences.");
    const lru = pool.reduce((a, s) => (s.lastUsed < a.lastUsed ? s : a));
    lru.inUse = true;
    try {
      await this.evict(lru);
    } catch (error) {
      lru.inUse = false;
      throw error;
    }
    lru.sessionKey = sessionKey;
    return lru;
  }

  /** Save (beforeEvict) and drop a slot's cache. */
  private async evict(slot: KvSlot): Promise<void> {
    await this.beforeEvict(slot);
    await slot.sequence.clearHistory();
    slot.dirty = false;
  }

  private createSlot(sessionKey: string = ANONYMOUS): KvSlot {
    const sequence = this.context.getSequence();
    // chatWrapper given: resolving it costs 0.5–1 s of CPU (ARCHITECTURE.md), done once per model.
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: this.chatWrapper });
    return { sequence, chat, sessionKey, evaluatedUnder: "", lastUsed: 0, dirty: false, inUse: false };
  }
}

/** How many of `prompt`'s first tokens a slot's cache already holds. */
function overlap(slot: KvSlot, prompt: readonly Token[]): number {
  return sharedPrefix(slot.sequence.contextTokens, prompt);
}
