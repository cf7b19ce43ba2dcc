/**
 * Turns stored feedback into the JSONL chat datasets LoRA trainers read:
 * - sft: `{"messages":[{role, content}, …]}` from corrections (prompt + corrected answer) and
 *   good-rated answers with text;
 * - preference (TRL's conversational format): `{"prompt":[…], "chosen":[assistant], "rejected":[assistant]}`
 *   from regenerations (chosen = the new answer) and from a good and a bad rating on the same prompt.
 * Every candidate line passes the filters in this order, each counted: malformed, consent,
 * PII (dropped, never re-redacted: a line the client's redactor missed is not trusted), duplicate.
 */
import { createHash } from "node:crypto";
import { FeedbackItem } from "./protocol";
import { hasText } from "./ingest";
import type { StoredItem } from "./store";

export type ExportType = "sft" | "preference";

/** A PII scanner with the shape of the app's `redact(text)`: findings empty = clean. */
export type PiiScan = (text: string) => { findings: readonly unknown[] };

interface Message {
  role: "system" | "user" | "assistant";
  content: string;
}
type Line = { messages: Message[] } | { prompt: Message[]; chosen: Message[]; rejected: Message[] };

export interface ExportStats {
  type: ExportType;
  domain: string;
  /** Stored items of the domain that were read. */
  items: number;
  /** Lines built before filtering. */
  candidates: number;
  written: number;
  dropped: { malformed: number; consent: number; pii: number; duplicate: number };
}

export interface ExportResult {
  lines: string[];
  stats: ExportStats;
}

type Candidate = { line: Line; item: FeedbackItem } | { malformed: true };

/** Builds the dataset of one domain; `scan` re-checks every text for PII. */
export function buildExport(
  stored: StoredItem[],
  domain: string,
  type: ExportType,
  scan: PiiScan,
): ExportResult {
  const stats: ExportStats = {
    type,
    domain,
    items: stored.length,
    candidates: 0,
    written: 0,
    dropped: { malformed: 0, consent: 0, pii: 0, duplicate: 0 },
  };
  const items: FeedbackItem[] = [];
  for (const s of stored) {
    const parsed = safeJson(s.json);
    const item = FeedbackItem.safeParse(parsed);
    if (item.success) items.push(item.data);
    else stats.dropped.malformed++;
  }
  const candidates = type === "sft" ? sftCandidates(items) : preferenceCandidates(items);
  stats.candidates = candidates.length + stats.dropped.malformed;
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const c of candidates) {
    if ("malformed" in c) {
      stats.dropped.malformed++;
      continue;
    }
    // Text without the text consent never leaves the service, whatever stored it.
    if (hasText(c.item) && c.item.consent !== "ratings_and_text") {
      stats.dropped.consent++;
      continue;
    }
    if (texts(c.line).some((t) => scan(t).findings.length > 0)) {
      stats.dropped.pii++;
      continue;
    }
    const json = JSON.stringify(c.line);
    const hash = createHash("sha256").update(json).digest("hex");
    if (seen.has(hash)) {
      stats.dropped.duplicate++;
      continue;
    }
    seen.add(hash);
    lines.push(json);
  }
  stats.written = lines.length;
  return { lines, stats };
}

function sftCandidates(items: FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  for (const item of items) {
    if (item.kind === "correction") out.push(conversation(item, item.correction));
    else if (item.kind === "rating" && item.rating === "good" && hasText(item))
      out.push(conversation(item, item.response));
  }
  return out;
}

function conversation(item: FeedbackItem, answer: string | null | undefined): Candidate {
  const prompt = promptMessages(item);
  if (!prompt || !answer?.trim()) return { malformed: true };
  return { item, line: { messages: [...prompt, { role: "assistant", content: answer }] } };
}

function preferenceCandidates(items: FeedbackItem[]): Candidate[] {
  const out: Candidate[] = [];
  // Ratings with text, grouped by the prompt they answer: a good and a bad answer to the same
  // prompt make a preference pair even without a regeneration.
  const rated = new Map<string, { good: FeedbackItem[]; bad: FeedbackItem[] }>();
  for (const item of items) {
    if (item.kind === "regeneration") {
      const prompt = promptMessages(item);
      if (!prompt || !item.chosen?.trim() || !item.rejected?.trim() || item.chosen === item.rejected) {
        out.push({ malformed: true });
        continue;
      }
      out.push({ item, line: pair(prompt, item.chosen, item.rejected) });
    } else if (item.kind === "rating" && item.rating && promptMessages(item) && item.response?.trim()) {
      const key = JSON.stringify(item.prompt);
      const group = rated.get(key) ?? { good: [], bad: [] };
      group[item.rating].push(item);
      rated.set(key, group);
    }
  }
  for (const { good, bad } of rated.values()) {
    for (const g of good)
      for (const b of bad) {
        if (g.response === b.response) continue;
        // Both halves go through the filters: a pair is only as clean as its worse item.
        const item = g.consent === "ratings_and_text" ? b : g;
        out.push({ item, line: pair(promptMessages(g)!, g.response!, b.response!) });
      }
  }
  return out;
}

function pair(prompt: Message[], chosen: string, rejected: string): Line {
  return {
    prompt,
    chosen: [{ role: "assistant", content: chosen }],
    rejected: [{ role: "assistant", content: rejected }],
  };
}

/** The conversation up to the answer; null unless it holds a non-empty user turn. */
function promptMessages(item: FeedbackItem): Message[] | null {
  const turns = item.prompt ?? [];
  if (!turns.some((t) => t.role === "user" && t.text.trim())) return null;
  return turns.map((t) => ({ role: t.role, content: t.text }));
}

function texts(line: Line): string[] {
  const msgs = "messages" in line ? line.messages : [...line.prompt, ...line.chosen, ...line.rejected];
  return msgs.map((m) => m.content);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
