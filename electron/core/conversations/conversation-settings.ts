/**
 * Per-conversation settings (issue 13): a conversation's own system prompt and sampling, and
 * named presets of both (tables from migration 0012). The turn pipeline reads a conversation's
 * settings on every turn (turn-plan.ts); what a turn used is kept on its turn record.
 */
import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { ApiError, ConversationSettings, SamplingSettings, type SamplingPreset } from "../../api";
import type { DomainHandlers } from "../handlers";

/** A conversation without settings of its own: the app's system prompt and default sampling. */
export const NO_SETTINGS: ConversationSettings = { systemPrompt: null, sampling: {} };

interface SettingsRow {
  system_prompt: string | null;
  sampling_json: string;
}

interface PresetRow extends SettingsRow {
  id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

/**
 * Stored sampling, validated: a row that no longer parses (written by a newer version, edited
 * by hand) gives the defaults rather than a turn that cannot start.
 */
function parseSampling(json: string): SamplingSettings {
  try {
    const parsed = SamplingSettings.strip().safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/** A blank system prompt means "the app's": stored as NULL, never as an empty system turn. */
export function cleanSystemPrompt(text: string | null): string | null {
  if (text === null) return null;
  return text.trim() ? text : null;
}

/**
 * Refuse a max tokens the loaded model's context cannot hold (the zod schema knows only the
 * absolute bound). `contextSize` null: no model loaded, checked again at the turn.
 */
export function checkMaxTokens(sampling: SamplingSettings, contextSize: number | null): void {
  if (sampling.maxTokens === undefined || contextSize === null) return;
  if (sampling.maxTokens > contextSize) {
    throw new ApiError(
      "invalid_input",
      `Max tokens must be between 1 and the model's context size (${contextSize}); it is ${sampling.maxTokens}.`,
    );
  }
}

export class ConversationSettingsStore {
  private readonly getStmt: Statement<[string], SettingsRow>;
  private readonly upsertStmt: Statement<[string, string | null, string, number]>;
  private readonly listStmt: Statement<[], PresetRow>;
  private readonly getPresetStmt: Statement<[string], PresetRow>;
  private readonly savePresetStmt: Statement<Record<string, unknown>>;
  private readonly deletePresetStmt: Statement<[string]>;

  constructor(db: Database) {
    this.getStmt = db.prepare(
      "SELECT system_prompt, sampling_json FROM conversation_settings WHERE conversation_id = ?",
    );
    this.upsertStmt = db.prepare(`
      INSERT INTO conversation_settings (conversation_id, system_prompt, sampling_json, updated_at)
      VALUES (?, ?, ?, ?)
      ON CONFLICT (conversation_id) DO UPDATE SET
        system_prompt = excluded.system_prompt, sampling_json = excluded.sampling_json,
        updated_at = excluded.updated_at`);
    this.listStmt = db.prepare("SELECT * FROM sampling_presets ORDER BY name COLLATE NOCASE, id");
    this.getPresetStmt = db.prepare("SELECT * FROM sampling_presets WHERE name = ?");
    // Saving under an existing name (any case) replaces that preset's values and keeps its id.
    this.savePresetStmt = db.prepare(`
      INSERT INTO sampling_presets (id, name, system_prompt, sampling_json, created_at, updated_at)
      VALUES (@id, @name, @systemPrompt, @sampling, @now, @now)
      ON CONFLICT (name) DO UPDATE SET
        name = excluded.name, system_prompt = excluded.system_prompt,
        sampling_json = excluded.sampling_json, updated_at = excluded.updated_at`);
    this.deletePresetStmt = db.prepare("DELETE FROM sampling_presets WHERE id = ?");
  }

  /** The conversation's settings; NO_SETTINGS when it has none (or does not exist). */
  get(conversationId: string): ConversationSettings {
    const row = this.getStmt.get(conversationId);
    if (!row) return NO_SETTINGS;
    return { systemPrompt: row.system_prompt, sampling: parseSampling(row.sampling_json) };
  }

  /**
   * Replace the conversation's settings (validated again here: the store is also written by
   * import). The caller checks that the conversation exists; a missing one fails its foreign key.
   */
  set(conversationId: string, settings: ConversationSettings, now = Date.now()): ConversationSettings {
    const clean = ConversationSettings.parse({
      systemPrompt: cleanSystemPrompt(settings.systemPrompt),
      sampling: settings.sampling,
    });
    this.upsertStmt.run(conversationId, clean.systemPrompt, JSON.stringify(clean.sampling), now);
    return clean;
  }

  listPresets(): SamplingPreset[] {
    return this.listStmt.all().map(toPreset);
  }

  /** Save settings under `name` (trimmed), replacing a preset of the same name. */
  savePreset(name: string, settings: ConversationSettings, now = Date.now()): SamplingPreset {
    const clean = name.replace(/\s+/g, " ").trim();
    if (!clean) throw new ApiError("invalid_input", "A preset needs a name.");
    const values = ConversationSettings.parse({
      systemPrompt: cleanSystemPrompt(settings.systemPrompt),
      sampling: settings.sampling,
    });
    this.savePresetStmt.run({
      id: randomUUID(),
      name: clean,
      systemPrompt: values.systemPrompt,
      sampling: JSON.stringify(values.sampling),
      now,
    });
    return toPreset(this.getPresetStmt.get(clean)!);
  }

  deletePreset(id: string): boolean {
    return this.deletePresetStmt.run(id).changes > 0;
  }
}

function toPreset(row: PresetRow): SamplingPreset {
  return {
    id: row.id,
    name: row.name,
    systemPrompt: row.system_prompt,
    sampling: parseSampling(row.sampling_json),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** presets.list / presets.save / presets.delete. */
export function presetHandlers(store: ConversationSettingsStore): DomainHandlers<"presets"> {
  return {
    "presets.list": () => store.listPresets(),
    "presets.save": ({ name, systemPrompt, sampling }) => store.savePreset(name, { systemPrompt, sampling }),
    "presets.delete": ({ id }) => ({ deleted: store.deletePreset(id) }),
  };
}
