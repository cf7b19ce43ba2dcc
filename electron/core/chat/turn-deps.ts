/**
 * What a turn pipeline is built from (TurnPipelineDeps), and the defaults used for what is not
 * given: system prompt, harness version, context size and KV policy.
 */
import type { AppSettings } from "../../api";
import type { AdapterRouting } from "../adapters/adapter-routing";
import type { ConversationStore } from "../conversations/conversation-store";
import type { ConversationRepository } from "../conversations/conversation-repository";
import type { EngineClient, KvPolicy } from "../engine/types";
import type { EventBus } from "../events/event-bus";
import type { GenuiTurns } from "../genui/genui-turns";
import type { MemoryService } from "../memory/memory-service";
import type { AgentTurns } from "../tools/agent-loop";
import type { AfterTurn } from "./after-turn";
import type { ChatStorage } from "./chat-storage";

export { DEFAULT_SYSTEM_PROMPT } from "../../../common/prompts";
export const NO_MODEL_MESSAGE = "No model is loaded. Open a .gguf model or try the demo model.";
/** Harness version when none is given (unit tests); core passes the real one (harness.ts). */
export const UNVERSIONED_HARNESS = "0.0.0+unversioned";
/** Context size assumed when the engine reports none (the engine's default). */
export const FALLBACK_CONTEXT_SIZE = 4096;

/** The model file's sha256 for the turn record: known now, or later (hashing in the background). */
export interface ModelHashes {
  knownSha256(path: string): string | null;
  sha256(path: string): Promise<string>;
}

export interface TurnPipelineDeps {
  /** Settings, turn records and the transaction a turn's writes share (chat-storage.ts). */
  storage: ChatStorage;
  conversations: ConversationStore;
  messages: ConversationRepository;
  engine: EngineClient;
  events: EventBus;
  /** Replaces DEFAULT_SYSTEM_PROMPT; "" sends no system turn. */
  systemPrompt?: string;
  defaultTemperature?: number;
  /**
   * Whether the loaded model is the built-in demo, which answers at DEMO_TEMPERATURE unless the
   * turn or conversation sets one: sampled at the usual 0.7 the tiny model's answers are noise
   * (right 5 of 160 times on its own training prompts; `npm run bench -- demo-suggestions`).
   */
  isDemo?: () => boolean;
  defaultMaxTokens?: number;
  /** How often a streaming answer's partial text is saved (ms). */
  flushIntervalMs?: number;
  /** Chooses the adapters of each turn; without it every turn uses the base model alone. */
  routing?: AdapterRouting;
  /** Stamped on every turn record (see harness.ts). */
  harnessVersion?: string;
  /** The KV policy passed to the engine (from the settings). */
  kvPolicy?: () => KvPolicy;
  modelHashes?: ModelHashes;
  /** Long-term memories: retrieved into prompts and remembered on request ("remember that …"). */
  memory?: MemoryService;
  /** What to do when a conversation outgrows the context (default sliding-window). */
  contextStrategy?: () => AppSettings["contextStrategy"];
  log?: (message: string, err: unknown) => void;
  /** GenUI: UI-mode turns (format, prompt, grammar, validated document). Without it, text only. */
  genui?: GenuiTurns;
  /** The Agent's tool calls: turns the Agent specialist leads get the tools. Without it, no tools. */
  agent?: AgentTurns;
  /**
   * Called in order after each turn commits and after its answer ends (after-turn.ts): memory
   * proposals, feedback, router overrides. Without them a turn has no effects beyond its rows.
   */
  afterTurn?: readonly AfterTurn[];
}

/** The context size of the loaded model, or the engine's default. */
export function contextSizeOf(engine: EngineClient): number {
  return engine.loaded?.contextSize ?? FALLBACK_CONTEXT_SIZE;
}

/** The KV policy of a turn: the settings', else "reevaluate". */
export function kvPolicyOf(deps: Pick<TurnPipelineDeps, "kvPolicy">): KvPolicy {
  return deps.kvPolicy?.() ?? "reevaluate";
}
