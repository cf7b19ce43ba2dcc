/**
 * Issue 27 numbers: recall per class of the national-id, address and name rules of `redact()` on
 * a held-out corpus (bench/redaction-identity-heldout.jsonl: 135 hand-written lines, 40 of them
 * negatives; the tests' fixtures are separate), false positives on every corpus, and the new
 * passes' speed on 1 MB inputs built to make them work hard. Prints JSON.
 *
 *   npx tsx bench/redaction-identity.ts
 */
import { fileURLToPath } from "node:url";
import { redact } from "../common/redaction";
import { readCorpus, scoreRedaction } from "../testing/corpora/redaction/evaluate";

const corpora = {
  "identity held-out (bench)": fileURLToPath(new URL("./redaction-identity-heldout.jsonl", import.meta.url)),
  "held-out (resources)": fileURLToPath(new URL("../resources/redaction-heldout.jsonl", import.meta.url)),
  "generated (resources)": fileURLToPath(new URL("../resources/redaction-corpus.jsonl", import.meta.url)),
};

const NEW_KINDS = new Set(["national-id", "address", "name"]);
const report: Record<string, unknown> = {};
for (const [name, path] of Object.entries(corpora)) {
  const score = scoreRedaction(readCorpus(path));
  report[name] = {
    lines: score.lines,
    kinds: Object.fromEntries(
      score.kinds
        .filter((k) => k.labelled > 0 || NEW_KINDS.has(k.kind))
        .map((k) => [
          k.kind,
          {
            labelled: k.labelled,
            recall: Math.round(k.recall * 1000) / 1000,
            falsePositives: k.falsePositives,
          },
        ]),
    ),
    negatives: score.negatives,
    misses: score.misses.filter((m) => NEW_KINDS.has(m.kind)).map((m) => `${m.kind}: ${m.value}`),
  };
}

const units = [
  "1 Aaaa ",
  "Dr. Aa ",
  "Marcus ",
  "Aa-",
  "12 rue a ",
  "AB 12 34 56 ",
  "123-45-",
  "046 454 ",
  "My name is ",
  "Hauptstr",
];
report.throughputMBps = Object.fromEntries(
  units.map((unit) => {
    const input = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const start = performance.now();
    redact(input);
    return [unit, Math.round((input.length / 1e6 / ((performance.now() - start) / 1000)) * 10) / 10];
  }),
);
console.log(JSON.stringify(report, null, 2));
