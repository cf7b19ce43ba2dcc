/**
 * `npm run bench -- redaction`: recall/precision of redact() on the generated corpus
 * (resources/redaction-corpus.jsonl) and on the hand-written held-out one
 * (resources/redaction-heldout.jsonl), and its throughput on the corpus and on 1 MB
 * adversarial inputs.
 */
import { fileURLToPath } from "node:url";
import { formatScore, readCorpus, scoreRedaction } from "../testing/corpora/redaction/evaluate";
import { redact } from "../common/redaction";
import { type BenchRow, report } from "./stats";

const HELDOUT_PATH = fileURLToPath(new URL("../resources/redaction-heldout.jsonl", import.meta.url));

/** Per-kind rows of one corpus, names prefixed with the corpus. */
function scoreRows(corpus: string, score: ReturnType<typeof scoreRedaction>): BenchRow[] {
  const rows: BenchRow[] = score.kinds.map((k) => ({
    name: `${corpus}: ${k.kind}`,
    labelled: k.labelled,
    recall: k.recall,
    falsePositives: k.falsePositives,
    precision: k.precision,
  }));
  rows.push({
    name: `${corpus}: negatives`,
    labelled: score.negatives.lines,
    recall: null,
    falsePositives: score.negatives.withFindings,
    precision: null,
  });
  return rows;
}

export function benchRedaction(): Promise<void> {
  const lines = readCorpus();
  const score = scoreRedaction(lines);
  const heldout = scoreRedaction(readCorpus(HELDOUT_PATH));
  console.log(`generated corpus\n${formatScore(score)}\n\nheld-out corpus\n${formatScore(heldout)}`);
  const rows = [...scoreRows("generated", score), ...scoreRows("held-out", heldout)];

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
  report("redaction", rows, {
    throughput: speed,
    misses: score.misses,
    heldoutMisses: heldout.misses,
  });
  return Promise.resolve();
}
