import { ApiError, type AppSettings, type Memory } from "../../api";
import type { AdapterUse, ChatTurn, GenerateOptions, GenerateResult, KvPolicy } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import { MEMORY_BUDGET_SHARE, memoryBlock, retrieveMemories } from "./memory-retrieval";
import type { MemoryStore } from "./memory-store";
import {
  cleanMemoryText,
  factsQuestion,
  MAX_MEMORY_CHARS,
  memoryKey,
  PROPOSED_FACTS_SCHEMA,
  proposalWorthKeeping,
  rememberRequest,
  statesAboutUser,
  validProposedFacts,
} from "./memory-text";
import { switchedOff } from "../../../common/env-switch";

/** Tokens for the facts answer: 3 facts of 200 characters in JSON, with room to spare. */
const FACTS_MAX_TOKENS = 256;

/** A generation that yields to every other engine request (EngineQueue.generateInBackground). */
export type BackgroundGenerate = (
  history: ChatTurn[],
  options: GenerateOptions,
  signal: AbortSignal,
) => Promise<GenerateResult>;

export interface MemoryServiceDeps {
  store: MemoryStore;
  events: EventBus;
  settings: () => Pick<AppSettings, "memoryEnabled">;
  embed: (texts: string[]) => Promise<number[][]>;
  /** The turn's embedding, shared with the router (see RetrievalDeps.embedQuery). */
  embedQuery?: (text: string) => Promise<number[]>;
  /** Key of the loaded model for the vector cache. */
  modelKey: () => string;
  /** Without it no facts are proposed. */
  generateInBackground?: BackgroundGenerate;
  log: (message: string, err: unknown) => void;
}

/** What an answer was generated from: the prompt, the answer and how it was made. */
export interface AnsweredTurn {
  conversationId: string;
  userMessageId: string;
  userText: string;
  /** The prompt the answer was generated from (with its system turn) and the answer. */
  prompt: readonly ChatTurn[];
  answer: string;
  adapters?: AdapterUse[];
  kvPolicy?: KvPolicy;
}

const notFound = (): ApiError =>
  new ApiError("not_found", "This memory does not exist (it may have been deleted).");

/**
 * Long-term memories: the panel's operations, "remember that …" in a message, retrieval into
 * prompts, and facts proposed by the model after an answer (stored as "proposed", used only
 * once the user accepts them). With memory off in the settings nothing is retrieved, proposed
 * or remembered from messages; the panel still works.
 */
export class MemoryService {
  private readonly background = new Set<{ controller: AbortController; done: Promise<void> }>();
  private closed = false;
  /**
   * Proposals only for messages about the user, and only facts built from the user's own words
   * (memory-text.ts). MACARON_MEMORY_PROPOSAL_FILTER=0 turns it off (bench/memory-proposals.ts
   * measures both).
   */
  private readonly filterProposals = !switchedOff(process.env.MACARON_MEMORY_PROPOSAL_FILTER);

  constructor(private readonly deps: MemoryServiceDeps) {}

  get enabled(): boolean {
    return this.deps.settings().memoryEnabled;
  }

  list(): Memory[] {
    return this.deps.store.list();
  }

  /** A memory the user typed: active at once. */
  create(text: string): Memory {
    const clean = this.checkText(text);
    const memory = this.deps.store.create({ text: clean, source: "user", status: "active" });
    this.changed();
    return memory;
  }

  /** Edit the text and/or accept a proposed memory. Throws not_found / invalid_input. */
  update(id: string, change: { text?: string; status?: "active" }): Memory {
    const { store } = this.deps;
    const memory = store.transaction(() => {
      if (!store.get(id)) throw notFound();
      if (change.text !== undefined) store.setText(id, this.checkText(change.text));
      if (change.status) store.setStatus(id, change.status);
      return store.get(id)!;
    });
    this.changed();
    return memory;
  }

  delete(id: string): boolean {
    const deleted = this.deps.store.delete(id);
    if (deleted) this.changed();
    return deleted;
  }

  /** Delete the memories that came from a conversation; call before deleting it. */
  deleteFromConversation(conversationId: string): number {
    const { store } = this.deps;
    const ids = store.idsFromConversation(conversationId);
    store.transaction(() => ids.forEach((id) => store.delete(id)));
    if (ids.length > 0) this.changed();
    return ids.length;
  }

  /**
   * For a user message starting with "remember that …" / "remember: …": store the fact as an
   * active user memory (inside the caller's transaction; call changed() after it commits).
   * Null when memory is off, the message is no such request, or the fact is known already.
   */
  rememberFromMessage(text: string, conversationId: string, messageId: string): Memory | null {
    if (!this.enabled) return null;
    const fact = rememberRequest(text);
    if (!fact) return null;
    const key = memoryKey(fact);
    if (this.deps.store.list().some((m) => memoryKey(m.text) === key && m.status === "active")) return null;
    return this.deps.store.create({
      text: fact,
      source: "user",
      status: "active",
      conversationId,
      messageId,
    });
  }

  /** The active memories to put into a prompt for `text`, within 15% of `contextSize`. */
  async retrieve(text: string, contextSize: number, estimate: (text: string) => number): Promise<Memory[]> {
    if (!this.enabled) return [];
    const budget = Math.floor(contextSize * MEMORY_BUDGET_SHARE);
    return retrieveMemories(this.deps, text, budget, estimate);
  }

  /** Record which memories an answer was given (inside the answer's transaction). */
  linkToMessage(messageId: string, memories: readonly Memory[]): void {
    if (memories.length > 0)
      this.deps.store.linkToMessage(
        messageId,
        memories.map((m) => m.id),
      );
  }

  /** The system-prompt block for these memories. */
  block(memories: readonly Memory[]): string {
    return memoryBlock(memories);
  }

  /**
   * After an answer completed: ask the model, in the background and after any other engine
   * work, for durable facts about the user in their last message; store the valid new ones as
   * "proposed". Never throws; close() aborts it.
   */
  proposeAfterAnswer(turn: AnsweredTurn): void {
    const generate = this.deps.generateInBackground;
    if (!generate || this.closed || !this.enabled) return;
    const controller = new AbortController();
    const entry = { controller, done: Promise.resolve() };
    entry.done = this.propose(generate, turn, controller.signal)
      .catch((err: unknown) => this.deps.log("proposing memories failed", err))
      .finally(() => this.background.delete(entry));
    this.background.add(entry);
  }

  /** Resolves when every proposal running now has finished (tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.background].map((b) => b.done));
  }

  emitChanged(): void {
    this.changed();
  }

  /**
   * Drop the proposals waiting or running now: another model is loading, and they were asked
   * for with the previous model's adapters (which may not fit the new base).
   */
  abortProposals(): void {
    for (const b of this.background) b.controller.abort();
  }

  /** Abort proposals in flight and wait for them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const b of this.background) b.controller.abort();
    await this.settled();
  }

  private async propose(
    generate: BackgroundGenerate,
    turn: AnsweredTurn,
    signal: AbortSignal,
  ): Promise<void> {
    // Only a message that says something about the user can hold a fact worth remembering.
    const filtered = this.filterProposals;
    if (filtered && !statesAboutUser(turn.userText)) return;
    // Ask as the next turn of the same conversation: the engine reuses the KV cache of the
    // prompt it just answered, so the question costs only its own tokens.
    const history: ChatTurn[] = [
      ...turn.prompt,
      { role: "assistant", text: turn.answer },
      { role: "user", text: factsQuestion(turn.userText) },
    ];
    const options: GenerateOptions = {
      temperature: 0,
      maxTokens: FACTS_MAX_TOKENS,
      jsonSchema: PROPOSED_FACTS_SCHEMA,
    };
    if (turn.adapters && turn.adapters.length > 0) options.adapters = turn.adapters;
    if (turn.kvPolicy) options.kvPolicy = turn.kvPolicy;
    const result = await generate(history, options, signal);
    if (signal.aborted || result.stopReason === "abort" || this.closed || !this.enabled) return;
    const { store } = this.deps;
    const facts = validProposedFacts(
      result.text,
      store.list().map((m) => m.text),
    ).filter((fact) => !filtered || proposalWorthKeeping(fact, turn.userText));
    if (facts.length === 0) return;
    try {
      store.transaction(() => {
        for (const text of facts) {
          store.create({
            text,
            source: "model",
            status: "proposed",
            conversationId: turn.conversationId,
            messageId: turn.userMessageId,
          });
        }
      });
    } catch (err) {
      // The conversation was deleted while the model thought: its facts go with it.
      if ((err as { code?: unknown }).code === "SQLITE_CONSTRAINT_FOREIGNKEY") return;
      throw err;
    }
    this.changed();
  }

  private checkText(text: string): string {
    const clean = cleanMemoryText(text, MAX_MEMORY_CHARS);
    if (!clean) {
      throw new ApiError(
        "invalid_input",
        "A memory must be non-empty text of at most 2000 characters, without control characters.",
      );
    }
    return clean;
  }

  private changed(): void {
    this.deps.events.emit("memories.changed", {});
  }
}
