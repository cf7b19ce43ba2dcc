/**
 * Conversation settings in the renderer (issue 13): the dialog's form and the answer record's
 * lines. Pure, so tests exercise them directly; core validates again (the same zod schema).
 */
import {
  type ConversationSettings,
  type Message,
  SamplingSettings,
  SYSTEM_PROMPT_MAX_CHARS,
} from "../../../electron/api";

export type SamplingKey = keyof SamplingSettings;

export interface SamplingField {
  key: SamplingKey;
  label: string;
  min: number;
  /** null: bounded by the loaded model's context (max tokens) or unbounded (top-k). */
  max: number | null;
  step: number;
  /** What leaving it empty means. */
  hint: string;
}

/** The fields in the order the dialog and the answer record show them; bounds as the API's. */
export const SAMPLING_FIELDS: readonly SamplingField[] = [
  {
    key: "temperature",
    label: "Temperature",
    min: 0,
    max: 2,
    step: 0.05,
    hint: "0 answers the same way every time",
  },
  {
    key: "topP",
    label: "Top-p",
    min: 0,
    max: 1,
    step: 0.01,
    hint: "keep the likeliest tokens up to this share",
  },
  {
    key: "topK",
    label: "Top-k",
    min: 0,
    max: null,
    step: 1,
    hint: "keep this many likeliest tokens (0: all)",
  },
  {
    key: "minP",
    label: "Min-p",
    min: 0,
    max: 1,
    step: 0.01,
    hint: "drop tokens less likely than this share of the top one",
  },
  { key: "repeatPenalty", label: "Repeat penalty", min: 1, max: 2, step: 0.05, hint: "1 is off" },
  { key: "maxTokens", label: "Max tokens", min: 1, max: null, step: 1, hint: "the longest answer" },
  {
    key: "seed",
    label: "Seed",
    min: 0,
    max: 4_294_967_295,
    step: 1,
    hint: "the same seed repeats an answer",
  },
];

/** The dialog's values: text as typed; a sampling field absent or NaN is "default". */
export interface SettingsForm {
  systemPrompt: string;
  sampling: Partial<Record<SamplingKey, number>>;
}

export function formFrom(settings: ConversationSettings): SettingsForm {
  return { systemPrompt: settings.systemPrompt ?? "", sampling: { ...settings.sampling } };
}

/** What the form asks for: a blank prompt is the app's (null), empty fields are left out. */
export function settingsFrom(form: SettingsForm): ConversationSettings {
  const sampling: SamplingSettings = {};
  for (const { key } of SAMPLING_FIELDS) {
    const v = form.sampling[key];
    if (v !== undefined && !Number.isNaN(v)) sampling[key] = v;
  }
  return { systemPrompt: form.systemPrompt.trim() ? form.systemPrompt : null, sampling };
}

/**
 * Why the form cannot be saved (the first problem, in words), or null. `contextSize`: the
 * loaded model's (null: none loaded; core checks again at the next turn).
 */
export function formProblem(form: SettingsForm, contextSize: number | null): string | null {
  const settings = settingsFrom(form);
  if ((settings.systemPrompt?.length ?? 0) > SYSTEM_PROMPT_MAX_CHARS) {
    return `The system prompt can be at most ${SYSTEM_PROMPT_MAX_CHARS.toLocaleString("en-US")} characters.`;
  }
  const parsed = SamplingSettings.strict().safeParse(settings.sampling);
  if (!parsed.success) return parsed.error.issues[0]?.message ?? "These settings are not valid.";
  const max = settings.sampling.maxTokens;
  if (max !== undefined && contextSize !== null && max > contextSize) {
    return `Max tokens must be between 1 and the model's context size (${contextSize}).`;
  }
  return null;
}

const number = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3, useGrouping: false });

/** The answer record's sampling (label "Temperature", value "0.7"), in SAMPLING_FIELDS order. */
export function samplingLines(
  generation: NonNullable<Message["generation"]>,
): { label: string; value: string }[] {
  const lines: { label: string; value: string }[] = [];
  for (const { key, label } of SAMPLING_FIELDS) {
    const v = generation.sampling[key];
    if (v !== undefined) lines.push({ label, value: number.format(v) });
  }
  return lines;
}

/** "System prompt: custom" (the conversation's own) or "System prompt: default" (the app's). */
export function systemPromptLabel(generation: NonNullable<Message["generation"]>): string {
  return generation.systemPrompt === null ? "System prompt: default" : "System prompt: custom";
}

/**
 * What an empty field means, shown as "Default (value)": the engine's sampling defaults
 * (node-llama-cpp's top-k 40, top-p 0.95, min-p 0; core's temperature 0.7 and 1,024 tokens),
 * overridden by what the conversation's last answer was generated with (a server started with
 * --temperature). A seed left empty is random.
 */
export function defaultLabel(
  key: SamplingKey,
  used?: Partial<Record<SamplingKey, number | undefined>>,
): string {
  const engine: Record<SamplingKey, string> = {
    temperature: "0.7",
    topP: "0.95",
    topK: "40",
    minP: "0",
    repeatPenalty: "off",
    maxTokens: "1024",
    seed: "random",
  };
  const value = key === "seed" ? undefined : used?.[key];
  return `Default (${value !== undefined ? String(value) : engine[key]})`;
}
