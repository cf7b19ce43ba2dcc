/**
 * Reads a chat dataset as the cloud export writes it (cloud/export.ts), one JSON object a line:
 * - SFT: `{"messages":[{role, content}, …]}`, the last message the assistant's answer;
 * - preference: `{"prompt":[…], "chosen":[{role:"assistant",content}], "rejected":[…]}`;
 * - a GRPO group (group-line.ts): `{"prompt":[…], "completions":[[{role:"assistant",content}], …],
 *   "rewards":[…]}`, K >= 2 sampled answers with one reward each (K >= 1 with a `baseline`);
 * - SFT with tool calls (the Agent's trajectories), OpenAI's layout: after the last user message,
 *   assistant messages with `tool_calls` each followed by one `tool` message per call
 *   (`tool_call_id`), then the final assistant answer; `tools` lists the functions offered.
 * Every line is checked here, before anything is tokenized, and a bad one is reported with its
 * line number.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { ToolCallRecord, ToolDefinition } from "../../common/engine-protocol";
import { parseGroupLine } from "./group-line";
import { TrainError } from "./train-error";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** One round of an answer that called tools: its text, then its calls with their results. */
export interface ToolRound {
  text: string;
  calls: ToolCallRecord[];
}

/** One usable line: the conversation before the answer, and the answer(s). */
export type RawExample =
  | {
      kind: "sft";
      line: number;
      prompt: ChatMessage[];
      answer: string;
      /** The answer's rounds of tool calls before `answer` (none for a text answer). */
      rounds?: ToolRound[];
      /** The functions offered to the model (OpenAI's `tools[].function`). */
      tools?: ToolDefinition[];
    }
  | {
      kind: "dpo";
      line: number;
      prompt: ChatMessage[];
      chosen: string;
      rejected: string;
      /** Pairs of answers that called tools: each side's rounds before its answer, and the tools. */
      chosenRounds?: ToolRound[];
      rejectedRounds?: ToolRound[];
      tools?: ToolDefinition[];
    }
  | {
      /** A GRPO group: K >= 2 sampled answers to `prompt` and their rewards. */
      kind: "grpo";
      line: number;
      prompt: ChatMessage[];
      completions: string[];
      rewards: number[];
      /** Groups of answers that called tools (agent episodes): each one's rounds, and the tools. */
      completionRounds?: ToolRound[][];
      tools?: ToolDefinition[];
      /** The reward the answers are measured against when the group has no contrast (group-line.ts). */
      baseline?: number;
    };

export interface MalformedLine {
  line: number;
  reason: string;
}

export interface DatasetFile {
  path: string;
  /** Non-blank lines. */
  lines: number;
  examples: RawExample[];
  /** Lines skipped as malformed (only with `skipMalformed`; otherwise the first one throws). */
  malformed: MalformedLine[];
  /** The file's bytes, for its sha256. */
  bytes: Buffer;
}

const ROLES = new Set(["system", "user", "assistant"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `tools` as OpenAI writes it: `[{type:"function", function:{name, description?, parameters?}}]`. */
function toolsOf(value: unknown): ToolDefinition[] | string {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return '"tools" must be an array';
  const out: ToolDefinition[] = [];
  for (const [i, t] of value.entries()) {
    const fn = isRecord(t) ? t.function : undefined;
    if (!isRecord(t) || t.type !== "function" || !isRecord(fn))
      return `tools[${i}] must be {"type":"function","function":{…}}`;
    if (typeof fn.name !== "string" || !NAME.test(fn.name))
      return `tools[${i}].function.name must match ${NAME}`;
    if (fn.description !== undefined && typeof fn.description !== "string")
      return `tools[${i}].function.description must be a string`;
    if (fn.parameters !== undefined && !isRecord(fn.parameters))
      return `tools[${i}].function.parameters must be a JSON schema object`;
    out.push({
      name: fn.name,
      ...(fn.description !== undefined ? { description: fn.description } : {}),
      ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
    });
  }
  return out;
}

/**
 * The answer's rounds (assistant messages with `tool_calls`, each call answered by a `tool`
 * message) and its final text, from the messages after the last user message.
 */
function roundsOf(answerMessages: unknown[]): { rounds: ToolRound[]; answer: string } | string {
  const rounds: ToolRound[] = [];
  let i = 0;
  const at = (j: number) => answerMessages[j] as Record<string, unknown>;
  while (i < answerMessages.length - 1) {
    const m = at(i);
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0)
      return `messages: only assistant messages with "tool_calls" and their "tool" results may come before the answer`;
    const round: ToolRound = { text: typeof m.content === "string" ? m.content : "", calls: [] };
    for (const [k, call] of (m.tool_calls as unknown[]).entries()) {
      const fn = isRecord(call) ? call.function : undefined;
      if (!isRecord(call) || typeof call.id !== "string" || !isRecord(fn) || typeof fn.name !== "string")
        return `tool_calls[${k}] must be {"id", "type":"function", "function":{"name","arguments"}}`;
      let args: unknown;
      try {
        args = typeof fn.arguments === "string" ? JSON.parse(fn.arguments) : (fn.arguments ?? {});
      } catch {
        return `tool_calls[${k}].function.arguments is not valid JSON`;
      }
      const result = at(i + 1 + k);
      if (!isRecord(result) || result.role !== "tool" || result.tool_call_id !== call.id)
        return `tool_calls[${k}] ("${call.id}") must be answered by the next "tool" message`;
      if (typeof result.content !== "string")
        return `the "tool" message of "${call.id}" needs a string content`;
      round.calls.push({ name: fn.name, arguments: args, result: result.content });
    }
    rounds.push(round);
    i += 1 + round.calls.length;
  }
  const last = answerMessages.at(-1) as Record<string, unknown> | undefined;
  if (i !== answerMessages.length - 1 || last?.role !== "assistant" || "tool_calls" in (last ?? {}))
    return "the last message must be the assistant's answer";
  // After calls the answer may be empty (the model ends its turn with the result).
  if (typeof last.content !== "string" || (rounds.length === 0 && !last.content.trim()))
    return "the assistant's answer is empty";
  return { rounds, answer: last.content };
}

/** A line with tool calls: prompt (plain messages up to the last user one), rounds, answer, tools. */
function toolExample(json: Record<string, unknown>, line: number): RawExample | string {
  const all = json.messages as unknown[];
  const lastUser = all.findLastIndex((m) => isRecord(m) && m.role === "user");
  if (lastUser < 0) return "the messages before the answer has no user message";
  const prompt = messages(all.slice(0, lastUser + 1), "messages");
  if (typeof prompt === "string") return prompt;
  const bad = checkPrompt(prompt, "the messages before the answer");
  if (bad) return bad;
  for (const m of all.slice(lastUser + 1)) if (!isRecord(m)) return "messages hold a non-object";
  const answer = roundsOf(all.slice(lastUser + 1));
  if (typeof answer === "string") return answer;
  const tools = toolsOf(json.tools);
  if (typeof tools === "string") return tools;
  return { kind: "sft", line, prompt, answer: answer.answer, rounds: answer.rounds, tools };
}

/** The messages of `value`, or why they are not usable. */
function messages(value: unknown, field: string): ChatMessage[] | string {
  if (!Array.isArray(value)) return `"${field}" must be an array of {role, content} messages`;
  const out: ChatMessage[] = [];
  for (const [i, m] of value.entries()) {
    if (!isRecord(m)) return `${field}[${i}] is not an object`;
    if (typeof m.role !== "string" || !ROLES.has(m.role))
      return `${field}[${i}].role must be "system", "user" or "assistant"`;
    if (typeof m.content !== "string") return `${field}[${i}].content must be a string`;
    out.push({ role: m.role as ChatMessage["role"], content: m.content });
  }
  return out;
}

/** A prompt must hold a non-empty user turn and end with one: that is the turn being answered. */
function checkPrompt(prompt: ChatMessage[], field: string): string | null {
  if (!prompt.some((m) => m.role === "user" && m.content.trim())) return `${field} has no user message`;
  if (prompt.at(-1)?.role !== "user") return `${field} must end with the user message being answered`;
  return null;
}

/** The single assistant answer of a preference side. */
function answerOf(value: unknown, field: string): string | { error: string } {
  const side = messages(value, field);
  if (typeof side === "string") return { error: side };
  if (side.length !== 1 || side[0]!.role !== "assistant")
    return { error: `"${field}" must hold exactly one assistant message` };
  if (!side[0]!.content.trim()) return { error: `"${field}" is an empty answer` };
  return side[0]!.content;
}

/** Whether a group's completions hold a tool call or result (an agent episode's group). */
function hasToolCompletion(completions: unknown): boolean {
  return (
    Array.isArray(completions) &&
    completions.some(
      (c) => Array.isArray(c) && c.some((m) => isRecord(m) && (m.role === "tool" || "tool_calls" in m)),
    )
  );
}

/**
 * A GRPO group of answers that called tools: the prompt, K >= 2 completions each laid out as an
 * SFT tool answer (rounds of `tool_calls` and `tool` results, then the answer), one finite
 * reward each, and the tools offered.
 */
function toolGroup(json: Record<string, unknown>, line: number): RawExample | string {
  const prompt = messages(json.prompt, "prompt");
  if (typeof prompt === "string") return prompt;
  const bad = checkPrompt(prompt, '"prompt"');
  if (bad) return bad;
  const baseline = json.baseline;
  if (baseline !== undefined && !(typeof baseline === "number" && Number.isFinite(baseline)))
    return '"baseline" must be a finite number';
  const completions = json.completions;
  if (!Array.isArray(completions) || completions.length < (baseline === undefined ? 2 : 1))
    return baseline === undefined
      ? "a group needs at least 2 completions"
      : "a group needs at least 1 completion";
  const parsed: { rounds: ToolRound[]; answer: string }[] = [];
  for (const [i, c] of completions.entries()) {
    if (!Array.isArray(c) || c.length === 0 || !c.every(isRecord))
      return `completions[${i}] must be a non-empty array of messages`;
    const r = roundsOf(c);
    if (typeof r === "string") return `completions[${i}]: ${r}`;
    parsed.push(r);
  }
  const rewards = json.rewards;
  if (!Array.isArray(rewards) || rewards.length !== parsed.length)
    return `"rewards" must hold one number per completion (${parsed.length})`;
  if (!rewards.every((r) => typeof r === "number" && Number.isFinite(r)))
    return '"rewards" must be finite numbers';
  const tools = toolsOf(json.tools);
  if (typeof tools === "string") return tools;
  return {
    kind: "grpo",
    line,
    prompt,
    completions: parsed.map((p) => p.answer),
    completionRounds: parsed.map((p) => p.rounds),
    rewards: rewards as number[],
    tools,
    ...(baseline !== undefined ? { baseline } : {}),
  };
}

/** One line parsed into an example, or the reason it is malformed. */
export function parseExampleLine(text: string, line: number): RawExample | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  if (!isRecord(json)) return "not a JSON object";
  if (
    ("completions" in json || "rewards" in json) &&
    ("tools" in json || hasToolCompletion(json.completions))
  )
    return toolGroup(json, line);
  if ("completions" in json || "rewards" in json) {
    const group = parseGroupLine(json);
    if (typeof group === "string") return group;
    const completions = group.completions.map((c) => c[0]!.content);
    const { prompt, rewards, baseline } = group;
    return {
      kind: "grpo",
      line,
      prompt,
      completions,
      rewards,
      ...(baseline !== undefined ? { baseline } : {}),
    };
  }
  if ("messages" in json) {
    const hasCalls =
      Array.isArray(json.messages) &&
      json.messages.some((m) => isRecord(m) && (m.role === "tool" || "tool_calls" in m));
    if (hasCalls || "tools" in json) return toolExample(json, line);
    const all = messages(json.messages, "messages");
    if (typeof all === "string") return all;
    const answer = all.at(-1);
    if (answer?.role !== "assistant") return "the last message must be the assistant's answer";
    if (!answer.content.trim()) return "the assistant's answer is empty";
    const prompt = all.slice(0, -1);
    const bad = checkPrompt(prompt, "the messages before the answer");
    return bad ?? { kind: "sft", line, prompt, answer: answer.content };
  }
  if ("prompt" in json || "chosen" in json || "rejected" in json) {
    const prompt = messages(json.prompt, "prompt");
    if (typeof prompt === "string") return prompt;
    const bad = checkPrompt(prompt, '"prompt"');
    if (bad) return bad;
    const withCalls = (side: unknown) =>
      Array.isArray(side) && side.some((m) => isRecord(m) && (m.role === "tool" || "tool_calls" in m));
    if ("tools" in json || withCalls(json.chosen) || withCalls(json.rejected)) {
      const sides: Record<string, { rounds: ToolRound[]; answer: string }> = {};
      for (const side of ["chosen", "rejected"] as const) {
        const value: unknown = json[side];
        if (!Array.isArray(value) || value.length === 0 || !value.every(isRecord))
          return `"${side}" must be a non-empty array of messages`;
        const parsed = roundsOf(value);
        if (typeof parsed === "string") return `${side}: ${parsed}`;
        sides[side] = parsed;
      }
      const tools = toolsOf(json.tools);
      if (typeof tools === "string") return tools;
      const { chosen, rejected } = sides as Record<
        "chosen" | "rejected",
        { rounds: ToolRound[]; answer: string }
      >;
      return {
        kind: "dpo",
        line,
        prompt,
        chosen: chosen.answer,
        rejected: rejected.answer,
        chosenRounds: chosen.rounds,
        rejectedRounds: rejected.rounds,
        tools,
      };
    }
    const chosen = answerOf(json.chosen, "chosen");
    if (typeof chosen !== "string") return chosen.error;
    const rejected = answerOf(json.rejected, "rejected");
    if (typeof rejected !== "string") return rejected.error;
    return { kind: "dpo", line, prompt, chosen, rejected };
  }
  return 'expected {"messages": [...]}, {"prompt": [...], "chosen": [...], "rejected": [...]} or {"prompt": [...], "completions": [...], "rewards": [...]}';
}

/**
 * Reads and checks `path`. Throws TrainError "bad_data" for a missing/unreadable file or (unless
 * `skipMalformed`) the first malformed line, "empty_data" when no line holds an example.
 */
export async function readDatasetFile(path: string, skipMalformed = false): Promise<DatasetFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new TrainError("bad_data", `Data file not found: ${path}`);
    if (code === "EISDIR")
      throw new TrainError("bad_data", `Expected a .jsonl data file but got a folder: ${path}`);
    throw new TrainError("bad_data", `Cannot read the data file ${path}: ${(err as Error).message}`);
  }
  const name = basename(path);
  const examples: RawExample[] = [];
  const malformed: MalformedLine[] = [];
  let lines = 0;
  for (const [i, text] of bytes.toString("utf8").split("\n").entries()) {
    if (!text.trim()) continue;
    lines++;
    const parsed = parseExampleLine(text, i + 1);
    if (typeof parsed !== "string") examples.push(parsed);
    else if (skipMalformed) malformed.push({ line: i + 1, reason: parsed });
    else throw new TrainError("bad_data", `${name} line ${i + 1}: ${parsed}`);
  }
  if (lines === 0) throw new TrainError("empty_data", `The data file ${name} is empty.`);
  if (examples.length === 0)
    throw new TrainError(
      "empty_data",
      `The data file ${name} holds no usable example (${lines} malformed lines).`,
    );
  return { path, lines, examples, malformed, bytes };
}
