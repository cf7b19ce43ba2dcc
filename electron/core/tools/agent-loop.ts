/**
 * The Agent's turns: when the Agent specialist leads a turn and tools are usable, the engine
 * gets the tools; each call the model makes is checked against its schema, shown to the user
 * as a pending step and run only once allowed (once, always for this tool in this
 * conversation, or never), its result (cut at the limit) given back to the model as a tool
 * result, and the model goes on, up to MAX_TOOL_STEPS calls, after which it must answer in
 * text. Every step is stored as it changes (tool_steps) and emitted (`chat.toolStep`).
 *
 * A result is data: it only ever reaches the model as a tool result, and nothing in it can
 * start a call; every call is the model's own and passes the user's permission.
 */
import type { Database } from "better-sqlite3";
import {
  ApiError,
  MAX_TOOL_STEPS,
  type RoutingInfo,
  TOOL_CALL_TIMEOUT_MS,
  TOOL_RESULT_MAX_CHARS,
  type ToolDecision,
  type ToolStep,
} from "../../api";
import type {
  ChatTurn,
  EngineClient,
  GenerateOptions,
  GenerateResult,
  ToolCallFormat,
  ToolCallOut,
  ToolCallRecord,
} from "../engine/types";
import type { EventBus } from "../events/event-bus";
import { AgentToolset } from "./agent-toolset";
import { checkArguments } from "./argument-check";
import { answerContext } from "./builtin-tools";
import { DENIED_RESULT, errorResult, invalidResult } from "./tool-results";
import { type ToolStepUpdate, ToolStepStore } from "./tool-step-store";
import type { CallableTool, ToolOutcome, ToolSource } from "./tool-types";

export interface AgentTurnsDeps {
  db: Database;
  /** Every callable tool: the catalog of MCP servers and built-in tools. */
  tools: ToolSource;
  events: EventBus;
  /** Whether an installed adapter is the Agent specialist (domain "agent"). */
  isAgentAdapter: (id: string) => boolean;
  log?: (message: string, err: unknown) => void;
  /** Tests shorten these. */
  callTimeoutMs?: number;
  maxSteps?: number;
}

/** How one turn uses tools: decided with the turn's plan. */
export interface AgentPlan {
  toolset: AgentToolset;
  /** The leading adapter's own call syntax (its manifest), if it has one. */
  toolFormat?: ToolCallFormat;
}

export interface AgentRun {
  plan: AgentPlan;
  conversationId: string;
  messageId: string;
  /** The prompt, ending with the user turn. */
  history: ChatTurn[];
  /** The turn's options (sampling, adapters, KV key); tools are added per round. */
  options: GenerateOptions;
  /** countTokens (optional) sizes results to the context exactly; without it, by bytes. */
  engine: Pick<EngineClient, "generate" | "countTokens">;
  onToken: (text: string) => void;
  signal: AbortSignal;
}

interface Waiting {
  conversationId: string;
  server: string;
  tool: string;
  resolve: (decision: ToolDecision | null) => void;
}

/** Text of a result the model gets: cut at the limit, and saying so. */
export function limitResult(text: string, alreadyCut = false): { text: string; truncated: boolean } {
  if (text.length <= TOOL_RESULT_MAX_CHARS && !alreadyCut) return { text, truncated: false };
  const kept = text.slice(0, TOOL_RESULT_MAX_CHARS);
  const how = alreadyCut
    ? `the result was cut at ${TOOL_RESULT_MAX_CHARS} characters`
    : `the result had ${text.length} characters; the first ${TOOL_RESULT_MAX_CHARS} are shown`;
  return { text: `${kept}\n[truncated: ${how}]`, truncated: true };
}

/**
 * Results cut so that the next round's prompt fits the model's context: what this round left
 * free (contextSize − contextTokens), less room for the answer (the turn's max tokens, at most a
 * quarter of the context), shared among the round's results. A 16,000-character result on a
 * 4,096-token model otherwise ended the answer with "The prompt has 16242 tokens…". Only what the
 * model reads is cut; the step keeps the result the user sees. Token counts come from the
 * engine's tokenizer when it has one; else one token per UTF-8 byte, an upper bound for
 * llama.cpp's tokenizers.
 */
export async function fitResults(
  records: ToolCallRecord[],
  round: Pick<GenerateResult, "contextSize" | "contextTokens">,
  maxTokens: number,
  engine: Pick<EngineClient, "countTokens">,
): Promise<ToolCallRecord[]> {
  if (round.contextSize <= 0 || records.length === 0) return records;
  const reserve = Math.min(maxTokens, Math.floor(round.contextSize / 4));
  // Per call: its name, arguments and the template's markers around the result.
  const overhead = 48;
  const room = round.contextSize - round.contextTokens - reserve - overhead * records.length;
  const each = Math.floor(room / records.length);
  const count = async (text: string): Promise<number> => {
    if (engine.countTokens) {
      try {
        return (await engine.countTokens([text]))[0] ?? Buffer.byteLength(text);
      } catch {
        // A count is an optimisation: the byte bound below is always safe.
      }
    }
    return Buffer.byteLength(text);
  };
  const fitted: ToolCallRecord[] = [];
  for (const record of records) {
    const text = record.result;
    if (typeof text !== "string") {
      fitted.push(record);
      continue;
    }
    const note = `\n[truncated: the result was cut to fit the model's context of ${round.contextSize} tokens]`;
    const tokens = await count(text);
    if (tokens <= each) {
      fitted.push(record);
      continue;
    }
    const budget = each - (await count(note));
    let kept = budget > 0 ? text.slice(0, Math.floor((text.length * budget) / tokens)) : "";
    // Proportional cuts can miss where tokens are unevenly spread: shrink until it fits.
    for (let i = 0; i < 8 && kept.length > 0 && (await count(kept)) > budget; i++)
      kept = kept.slice(0, Math.floor(kept.length * 0.8));
    fitted.push({ ...record, result: `${kept}${note}` });
  }
  return fitted;
}

export class AgentTurns {
  readonly steps: ToolStepStore;
  private readonly pending = new Map<string, Waiting>();
  private readonly log: (message: string, err: unknown) => void;
  private closed = false;

  constructor(private readonly deps: AgentTurnsDeps) {
    this.steps = new ToolStepStore(deps.db);
    this.log = deps.log ?? console.error;
  }

  get maxSteps(): number {
    return this.deps.maxSteps ?? MAX_TOOL_STEPS;
  }

  /**
   * The tools of a turn whose routing is `routing`: null unless the Agent specialist leads it
   * (routed or pinned) and at least one tool is usable.
   */
  planFor(routing: RoutingInfo, toolFormat?: ToolCallFormat): AgentPlan | null {
    const lead = routing.adapters[0];
    if (!lead || !this.deps.isAgentAdapter(lead.id)) return null;
    let tools: CallableTool[];
    try {
      tools = this.deps.tools.tools();
    } catch (err) {
      this.log("listing the tools failed; answering without tools", err);
      return null;
    }
    const toolset = new AgentToolset(tools, (m) => this.log(m, null));
    if (toolset.size === 0) return null;
    return toolFormat ? { toolset, toolFormat } : { toolset };
  }

  /** At start-up: calls a killed process left pending or running can never finish. */
  stopLeftovers(): number {
    return this.steps.stopUnfinished();
  }

  /**
   * Generate an answer with tools: rounds of generation and calls. Returns the whole answer's
   * text (every round's, as streamed) and its summed numbers; stopReason "abort" after Stop.
   * Engine failures are thrown, as engine.generate throws them.
   */
  async run(run: AgentRun): Promise<GenerateResult> {
    const { plan, signal } = run;
    let turns = [...run.history];
    let text = "";
    let calls = 0;
    const total = { tokens: 0, durationMs: 0, promptTokensEvaluated: 0 };
    let ttftMs: number | null = null;
    let last: GenerateResult | null = null;
    const finish = (stopReason: GenerateResult["stopReason"]): GenerateResult => ({
      text,
      stopReason,
      tokens: total.tokens,
      ttftMs,
      durationMs: total.durationMs,
      promptTokensEvaluated: total.promptTokensEvaluated,
      contextTokens: last?.contextTokens ?? 0,
      contextSize: last?.contextSize ?? 0,
    });
    for (;;) {
      const withTools = calls < this.maxSteps;
      const options: GenerateOptions = { ...run.options };
      if (withTools) {
        options.tools = plan.toolset.definitions;
        options.toolChoice = "auto";
        if (plan.toolFormat) options.toolFormat = plan.toolFormat;
      }
      // Rounds after the first are separated from the text before them, as the user sees it.
      const separate = text.length > 0 && !/\s$/.test(text);
      let separated = false;
      const onToken = (piece: string): void => {
        if (separate && !separated && piece.length > 0) {
          separated = true;
          run.onToken("\n\n");
        }
        run.onToken(piece);
      };
      const result = await run.engine.generate(turns, options, onToken, signal);
      last = result;
      if (separate && (separated || result.text.length > 0)) text += "\n\n";
      text += result.text;
      total.tokens += result.tokens;
      total.durationMs += result.durationMs;
      total.promptTokensEvaluated += result.promptTokensEvaluated;
      if (ttftMs === null && result.ttftMs !== null)
        ttftMs = total.durationMs - result.durationMs + result.ttftMs;
      if (signal.aborted || result.stopReason === "abort") return finish("abort");
      // Calls when none were offered (past the limit) are not the engine's to make: ignored.
      const made = withTools && result.stopReason === "toolCalls" ? (result.toolCalls ?? []) : [];
      if (made.length === 0) return finish(result.stopReason === "toolCalls" ? "eos" : result.stopReason);
      const records: ToolCallRecord[] = [];
      // Calls past the limit are dropped: the next round has no tools and must answer.
      for (const call of made.slice(0, this.maxSteps - calls)) {
        const record = await this.step(run, call, calls);
        calls++;
        if (!record) return finish("abort");
        records.push(record);
      }
      const fitted = await fitResults(records, result, options.maxTokens, run.engine);
      turns = [...turns, { role: "assistant", text: result.text, calls: fitted }];
    }
  }

  /**
   * The user's decision on a pending call (chat.decideTool). "always" is remembered for this
   * tool in this conversation. Returns the step as it is now (running or denied).
   */
  decide(conversationId: string, stepId: string, decision: ToolDecision): ToolStep {
    const waiting = this.pending.get(stepId);
    if (!waiting || waiting.conversationId !== conversationId) {
      throw new ApiError(
        "not_found",
        "This tool call is not waiting for a decision (it was decided or stopped, or belongs to another conversation).",
      );
    }
    const step = this.deps.db.transaction(() => {
      if (decision === "always") this.steps.grant(conversationId, waiting.server, waiting.tool);
      return this.steps.update(
        stepId,
        decision === "deny" ? { state: "denied", decision: "deny" } : { state: "running", decision },
      );
    })();
    this.pending.delete(stepId);
    if (!step) {
      // Its answer was deleted meanwhile: nothing is left to run the call for.
      waiting.resolve(null);
      throw new ApiError("not_found", "This answer was deleted.");
    }
    this.emit(conversationId, step);
    waiting.resolve(decision);
    return step;
  }

  /** Core shuts down: every call waiting for the user ends stopped. */
  close(): void {
    this.closed = true;
    for (const waiting of [...this.pending.values()]) waiting.resolve(null);
    this.pending.clear();
  }

  /** One call: checked, allowed, run. Null when Stop ended the answer during it. */
  private async step(run: AgentRun, call: ToolCallOut, index: number): Promise<ToolCallRecord | null> {
    const { conversationId, messageId, signal } = run;
    const record = (result: string): ToolCallRecord => ({
      name: call.name,
      arguments: call.arguments,
      result,
    });
    const tool = run.plan.toolset.resolve(call.name);
    const check = tool
      ? checkArguments(tool.inputSchema, call.arguments)
      : { ok: false as const, message: `there is no tool named "${call.name}"` };
    if (!tool || !check.ok) {
      const error = check.ok ? "" : check.message;
      const step = this.steps.create({
        messageId,
        index,
        server: tool?.server ?? "",
        tool: tool?.name ?? call.name,
        arguments: call.arguments,
        state: "invalid",
        error,
      });
      this.emit(conversationId, step);
      return record(invalidResult(error));
    }

    const granted = this.steps.isGranted(conversationId, tool.server, tool.name);
    let step = this.steps.create({
      messageId,
      index,
      server: tool.server,
      tool: tool.name,
      arguments: call.arguments,
      state: granted ? "running" : "pending",
    });
    if (granted) step = this.update(conversationId, step, { decision: "remembered" });
    else {
      // Waiting before the prompt goes out: a decision may come back within the emit itself.
      const asked = this.ask(step, conversationId, signal);
      this.emit(conversationId, step);
      const decision = await asked;
      if (decision === null) {
        this.update(conversationId, step, { state: "stopped" });
        return null;
      }
      if (decision === "deny") return record(DENIED_RESULT);
    }

    const started = performance.now();
    const outcome = await this.callTool(tool, call.arguments, run);
    const durationMs = performance.now() - started;
    if (signal.aborted) {
      this.update(conversationId, step, { state: "stopped", durationMs, error: "Stopped by the user." });
      return null;
    }
    if (!outcome.ok) {
      this.update(conversationId, step, { state: "error", error: outcome.error, durationMs });
      return record(errorResult(outcome.error));
    }
    const result = limitResult(outcome.text, outcome.truncated);
    this.update(conversationId, step, {
      state: "done",
      result: result.text,
      truncated: result.truncated,
      durationMs,
    });
    return record(result.text);
  }

  /** Wait for the user's decision; null when Stop or shutdown came first. */
  private ask(step: ToolStep, conversationId: string, signal: AbortSignal): Promise<ToolDecision | null> {
    return new Promise((resolve) => {
      if (signal.aborted || this.closed) {
        resolve(null);
        return;
      }
      const onAbort = (): void => {
        this.pending.delete(step.id);
        resolve(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.pending.set(step.id, {
        conversationId,
        server: step.server,
        tool: step.tool,
        resolve: (decision) => {
          signal.removeEventListener("abort", onAbort);
          resolve(decision);
        },
      });
    });
  }

  /**
   * Run the tool inside the answer's context, ended by Stop or the timeout. The source promises
   * to honour the signal; the race makes sure a source that does not cannot hold the answer.
   */
  private async callTool(tool: CallableTool, args: unknown, run: AgentRun): Promise<ToolOutcome> {
    const timeoutMs = this.deps.callTimeoutMs ?? TOOL_CALL_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([run.signal, timeout]);
    const ended = (): ToolOutcome => ({
      ok: false,
      error: timeout.aborted
        ? `The tool did not answer within ${Math.round(timeoutMs / 100) / 10} s (timed out).`
        : "Stopped by the user.",
    });
    let onAbort: (() => void) | null = null;
    const aborted = new Promise<ToolOutcome>((resolve) => {
      onAbort = () => resolve(ended());
      signal.addEventListener("abort", onAbort, { once: true });
    });
    const context = { conversationId: run.conversationId, messageId: run.messageId };
    const called = answerContext
      .run(context, () => this.deps.tools.call(tool, args, signal))
      .catch((err: unknown): ToolOutcome => ({
        ok: false,
        error: err instanceof Error ? err.message : String(err),
      }));
    try {
      const outcome = await Promise.race([called, aborted]);
      return signal.aborted && outcome.ok ? ended() : outcome;
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }

  private update(conversationId: string, step: ToolStep, change: ToolStepUpdate): ToolStep {
    const updated = this.steps.update(step.id, change) ?? { ...step, ...change };
    this.emit(conversationId, updated);
    return updated;
  }

  private emit(conversationId: string, step: ToolStep): void {
    this.deps.events.emit("chat.toolStep", { conversationId, messageId: step.messageId, step });
  }
}
