/**
 * The per-turn decision, made before anything is written: the sampling (defaults applied),
 * the adapters (the router's choice, or the base model alone), the memories to recall and
 * the answer's format (text or GenUI).
 */
import type { AdapterSelection, Memory, SamplingSettings } from "../../api";
import type { ResolvedAdapters } from "../adapters/adapter-routing";
import type { AnswerFormat } from "../genui/genui-turns";
import type { AgentPlan } from "../tools/agent-loop";
import type { LoadedModelTokens } from "./token-estimate";
import { checkMaxTokens } from "../conversations/conversation-settings";
import { contextSizeOf, type TurnPipelineDeps } from "./turn-deps";

/** The fields of `s` that are set (an explicit undefined must not hide the conversation's). */
function definedOf(s: SamplingSettings): SamplingSettings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
}

/**
 * The sampling of one turn: the turn's own (chat.send), else the conversation's, else the
 * defaults for temperature and max tokens; the other samplers stay absent unless set (the
 * engine's defaults then apply).
 */
export interface TurnSampling extends SamplingSettings {
  temperature: number;
  maxTokens: number;
}

/** How one turn is answered. */
export interface TurnPlan {
  sampling: TurnSampling;
  /** The conversation's own system prompt; null: the app's (deps.systemPrompt or the default). */
  systemPrompt: string | null;
  resolved: ResolvedAdapters;
  memories: readonly Memory[];
  format: AnswerFormat;
  /** The tools of an Agent turn (null: a plain answer). */
  agent: AgentPlan | null;
}

/** The demo model's temperature when nothing sets one: greedy (see TurnPipelineDeps.isDemo). */
export const DEMO_TEMPERATURE = 0;

export class TurnPlanner {
  constructor(
    private readonly deps: TurnPipelineDeps,
    private readonly tokens: LoadedModelTokens,
    private readonly log: (message: string, err: unknown) => void,
  ) {}

  /**
   * `s` (the turn's) over `conversation` (the conversation's settings), field by field.
   * Throws ApiError invalid_input for a max tokens the loaded model's context cannot hold.
   */
  sampling(s: SamplingSettings | undefined, conversation: SamplingSettings = {}): TurnSampling {
    const merged = { ...conversation, ...definedOf(s ?? {}) };
    const sampling: TurnSampling = {
      ...merged,
      temperature:
        merged.temperature ??
        (this.deps.isDemo?.() ? DEMO_TEMPERATURE : undefined) ??
        this.deps.defaultTemperature ??
        0.7,
      maxTokens: merged.maxTokens ?? this.deps.defaultMaxTokens ?? 1024,
    };
    // Only what the user chose: the default max tokens is capped by the engine itself.
    if (merged.maxTokens !== undefined) checkMaxTokens(sampling, contextSizeOf(this.deps.engine));
    return sampling;
  }

  /** The adapters of a turn; throws ApiError invalid_input for a bad choice. */
  route(selection: AdapterSelection, text: string): Promise<ResolvedAdapters> {
    const routing = this.deps.routing;
    if (!routing) {
      return Promise.resolve({
        routing: { mode: "base", adapters: [], confidence: 1, reason: "no adapters installed", latencyMs: 0 },
        adapters: [],
        scores: {},
        skipped: [],
      });
    }
    return routing.resolve(selection, text);
  }

  /** The active memories for a prompt (none without memory, or when it is off). Never throws. */
  async retrieve(text: string): Promise<Memory[]> {
    const memory = this.deps.memory;
    if (!memory) return [];
    const contextSize = contextSizeOf(this.deps.engine);
    try {
      return await memory.retrieve(text, contextSize, (t) => this.tokens.estimate(t));
    } catch (err) {
      this.log("memory retrieval failed; answering without memories", err);
      return [];
    }
  }

  /**
   * Tools when the Agent specialist leads a text turn and some tool is usable. The adapter's own
   * call syntax (its manifest's toolCallFormat) comes with the resolved selection when it has one.
   */
  agentFor(format: AnswerFormat, resolved: ResolvedAdapters): AgentPlan | null {
    if (format !== "text" || !this.deps.agent) return null;
    return this.deps.agent.planFor(resolved.routing, resolved.toolFormat);
  }

  /** Text unless GenUI is wired and the turn asks for (or is routed to) UI. */
  formatFor(requested: AnswerFormat | undefined, resolved: ResolvedAdapters): AnswerFormat {
    return this.deps.genui?.formatFor(requested, resolved.routing) ?? "text";
  }
}
