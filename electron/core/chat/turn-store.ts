import type { Database, Statement } from "better-sqlite3";
import {
  type AppliedAdapter,
  type GenerationStats,
  type Message,
  type RoutingInfo,
  SamplingSettings,
} from "../../api";
import type { KvPolicy } from "../engine/types";

/** What the router decided, as stored in turns.router_json. */
export interface RouterRecord {
  mode: RoutingInfo["mode"];
  confidence: number;
  reason: string;
  latencyMs: number;
  scores: Record<string, number>;
  skipped: { id: string; reason: string }[];
}

/** The start of a turn record, written with the streaming assistant message. */
export interface TurnStart {
  messageId: string;
  modelSha256: string | null;
  harnessVersion: string;
  adapters: AppliedAdapter[];
  router: RouterRecord;
  /** The sampling it was generated with, defaults filled in (temperature and max tokens). */
  sampling: SamplingSettings & Required<Pick<SamplingSettings, "temperature" | "maxTokens">>;
  /** The conversation's own system prompt; null: the app's (migration 0012). */
  systemPrompt?: string | null;
  kvPolicy: KvPolicy;
}

/** Message.generation of a turn from its stored columns; null when there is no turn record. */
export function generationFromColumns(
  samplingJson: string | null,
  systemPrompt: string | null,
): NonNullable<Message["generation"]> | null {
  if (samplingJson === null) return null;
  try {
    const parsed = SamplingSettings.strip().safeParse(JSON.parse(samplingJson));
    // An imported turn records no sampling ('{}'): nothing to show.
    if (!parsed.success || Object.keys(parsed.data).length === 0) return null;
    return { sampling: parsed.data, systemPrompt };
  } catch {
    return null;
  }
}

/** How the generation went, written when it ends. */
export interface TurnTimings extends GenerationStats {
  promptTokensEvaluated: number;
  stopReason: string;
}

/** The RoutingInfo of a turn from its stored columns (Message.routing). */
export function routingFromColumns(
  adaptersJson: string | null,
  routerJson: string | null,
): RoutingInfo | null {
  if (adaptersJson === null || routerJson === null) return null;
  try {
    const adapters = JSON.parse(adaptersJson) as AppliedAdapter[];
    const router = JSON.parse(routerJson) as RouterRecord;
    return {
      mode: router.mode,
      adapters,
      confidence: router.confidence,
      reason: router.reason,
      latencyMs: router.latencyMs,
    };
  } catch {
    return null;
  }
}

/** The `turns` table (migration 0003): the full record of each assistant turn. */
export class TurnStore {
  private readonly insertStmt: Statement<[Record<string, unknown>]>;
  private readonly timingsStmt: Statement<[string, string]>;
  private readonly shaStmt: Statement<[string, string]>;

  constructor(db: Database) {
    this.insertStmt = db.prepare(`
      INSERT INTO turns (message_id, model_sha256, harness_version, adapters_json, router_json,
        sampling_json, system_prompt, timings_json, kv_policy, created_at)
      VALUES (@messageId, @modelSha256, @harnessVersion, @adapters, @router, @sampling, @systemPrompt, NULL,
        @kvPolicy, @createdAt)`);
    this.timingsStmt = db.prepare("UPDATE turns SET timings_json = ? WHERE message_id = ?");
    this.shaStmt = db.prepare(
      "UPDATE turns SET model_sha256 = ? WHERE message_id = ? AND model_sha256 IS NULL",
    );
  }

  /** Record a turn's decision; call in the transaction that commits its assistant message. */
  start(turn: TurnStart, now = Date.now()): void {
    this.insertStmt.run({
      messageId: turn.messageId,
      modelSha256: turn.modelSha256,
      harnessVersion: turn.harnessVersion,
      adapters: JSON.stringify(turn.adapters),
      router: JSON.stringify(turn.router),
      sampling: JSON.stringify(turn.sampling),
      systemPrompt: turn.systemPrompt ?? null,
      kvPolicy: turn.kvPolicy,
      createdAt: now,
    });
  }

  /** Store the timings once the generation ended (null when it failed before producing any). */
  finish(messageId: string, timings: TurnTimings | null): void {
    if (timings) this.timingsStmt.run(JSON.stringify(timings), messageId);
  }

  /** Fill in the model hash of a turn that ran before the hash was known. */
  setModelSha256(messageId: string, sha256: string): void {
    this.shaStmt.run(sha256, messageId);
  }
}
