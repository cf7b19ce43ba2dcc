/**
 * `npm run bench -- redaction`: recall/precision of redact() on resources/redaction-corpus.jsonl
 * and its throughput on the corpus and on 1 MB adversarial inputs.
 */
import { formatScore, readCorpus, scoreRedaction } from "../electron/core/feedback/corpus/evaluate";
import { redact } from "../electron/core/feedback/redaction";
import { type BenchRow, report } from "./stats";

export function benchRedaction(): Promise<void> {
  const lines = readCorpus();
  const score = scoreRedaction(lines);
  console.log(formatScore(score));
  const rows: BenchRow[] = score.kinds.map((k) => ({
    name: k.kind,
    labelled: k.labelled,
    recall: k.recall,
    falsePositives: k.falsePositives,
    precision: k.precision,
  }));
  rows.push({
    name: "negatives",
    labelled: score.negatives.lines,
    recall: null,
    falsePositives: score.negatives.withFindings,
    precision: null,
  });

  const corpusText = lines.map((l) => l.text).join("\n");
  const throughput = (text: string): number => {
    const start = performance.now();
    redact(text);
    return text.length / 1e6 / ((performance.now() - start) / 1000);
  };
  const inputs: Record<string, string> = {
    "corpus x20": corpusText.repeat(20),
    "1 MB digits+spaces": "1 ".repeat(500_000),
    "1 MB letters": "a".repeat(1_000_000),
    "1 MB 'a@'": "a@".repeat(500_000),
  };
  const speed = Object.entries(inputs).map(([name, text]) => ({ name, MBps: throughput(text) }));
  console.table(speed.map((s) => ({ input: s.name, "MB/s": Math.round(s.MBps * 10) / 10 })));
  report("redaction", rows, { throughput: speed, misses: score.misses });
  return Promise.resolve();
}
