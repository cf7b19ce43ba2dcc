/**
 * Scores `redact()` on a labelled corpus: recall per kind (the share of labelled values no
 * longer present in the output) and false positives (findings of a kind on lines that have no
 * value of that kind; negatives are lines with no PII at all). Used by the corpus test and by
 * `npm run bench -- redaction`.
 */
import { readFileSync } from "node:fs";
import { PII_KINDS, type PiiKind, type RedactionResult, redact } from "../../../common/redaction";
import { CORPUS_PATH, type CorpusLine } from "./generate-corpus";

export interface KindScore {
  kind: PiiKind;
  labelled: number;
  removed: number;
  recall: number;
  /** Findings of this kind on lines without a labelled value of this kind. */
  falsePositives: number;
  /** removed / (removed + falsePositives). */
  precision: number;
}

export interface CorpusScore {
  lines: number;
  kinds: KindScore[];
  negatives: { lines: number; withFindings: number; rate: number };
  misses: { kind: PiiKind; value: string; text: string }[];
  falsePositives: { text: string; output: string; kinds: PiiKind[] }[];
  /** Lines where redacting the output again changed it (must be empty). */
  notIdempotent: string[];
}

/** Read a JSONL corpus (default: resources/redaction-corpus.jsonl); throws on a malformed line. */
export function readCorpus(path: string = CORPUS_PATH): CorpusLine[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const parsed = JSON.parse(l) as CorpusLine;
      if (typeof parsed.text !== "string" || !Array.isArray(parsed.pii))
        throw new Error(`${path}:${i + 1}: not a corpus line`);
      return parsed;
    });
}

export function scoreRedaction(
  lines: CorpusLine[],
  redactText: (t: string) => RedactionResult = redact,
): CorpusScore {
  const labelled = new Map<PiiKind, number>();
  const removed = new Map<PiiKind, number>();
  const fp = new Map<PiiKind, number>();
  const add = (m: Map<PiiKind, number>, k: PiiKind, n = 1): void => void m.set(k, (m.get(k) ?? 0) + n);
  const score: CorpusScore = {
    lines: lines.length,
    kinds: [],
    negatives: { lines: 0, withFindings: 0, rate: 0 },
    misses: [],
    falsePositives: [],
    notIdempotent: [],
  };
  for (const line of lines) {
    const out = redactText(line.text);
    for (const { kind, value } of line.pii) {
      add(labelled, kind);
      if (out.text.includes(value)) score.misses.push({ kind, value, text: line.text });
      else add(removed, kind);
    }
    const labelledKinds = new Set(line.pii.map((p) => p.kind));
    const spurious = out.findings.filter((f) => !labelledKinds.has(f.kind));
    for (const f of spurious) add(fp, f.kind, f.count);
    if (spurious.length > 0)
      score.falsePositives.push({ text: line.text, output: out.text, kinds: spurious.map((f) => f.kind) });
    if (line.pii.length === 0) {
      score.negatives.lines++;
      if (out.findings.length > 0) score.negatives.withFindings++;
    }
    if (redactText(out.text).text !== out.text) score.notIdempotent.push(line.text);
  }
  score.negatives.rate = score.negatives.lines ? score.negatives.withFindings / score.negatives.lines : 0;
  score.kinds = PII_KINDS.map((kind) => {
    const l = labelled.get(kind) ?? 0;
    const r = removed.get(kind) ?? 0;
    const f = fp.get(kind) ?? 0;
    return {
      kind,
      labelled: l,
      removed: r,
      recall: l ? r / l : 1,
      falsePositives: f,
      precision: r + f ? r / (r + f) : 1,
    };
  });
  return score;
}

/** The score as a printable table (one row per kind, then the negatives). */
export function formatScore(score: CorpusScore): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const rows = score.kinds.map(
    (k) =>
      `${k.kind.padEnd(8)} ${String(k.labelled).padStart(8)} ${String(k.removed).padStart(8)} ${pct(k.recall).padStart(8)} ${String(k.falsePositives).padStart(6)} ${pct(k.precision).padStart(10)}`,
  );
  return [
    `kind     labelled  removed   recall     FP  precision`,
    ...rows,
    `negatives: ${score.negatives.withFindings}/${score.negatives.lines} lines with a finding (${pct(score.negatives.rate)}); corpus ${score.lines} lines`,
  ].join("\n");
}
