/**
 * Writes resources/redaction-corpus.jsonl: labelled lines for measuring `redact()` (recall per
 * kind, false positives on negatives). Deterministic (seeded PRNG), so the committed file is
 * reproducible: `npx tsx testing/corpora/redaction/generate-corpus.ts`.
 * A line is {"text", "pii": [{"kind", "value"}], "note"?}; an empty `pii` is a negative.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { PiiKind } from "../../../common/redaction/rule";
import { TRICKY_LINES } from "./tricky-lines";
import { FIRST, Random, card, email, homePath, iban, ipv4, ipv6, phone, secret } from "./values";

export interface CorpusLine {
  text: string;
  pii: { kind: PiiKind; value: string }[];
  note?: string;
}

export const CORPUS_PATH = resolve(import.meta.dirname, "../../../resources/redaction-corpus.jsonl");

const SEED = 20240611;

/** Sentences the values are dropped into: chat-like, code-like, and data-like. */
const FRAMES = [
  (x: string) => `Can you write a short reply to ${x} about the invoice?`,
  (x: string) => `My contact is ${x}, thanks!`,
  (x: string) => `${x}`,
  (x: string) => `Please send the report to ${x}.`,
  (x: string) => `"value": "${x}"`,
  (x: string) => `Here is the log line:\n[2024-05-02 10:31:07] user=${x} status=200`,
  (x: string) => `(${x})`,
  (x: string) => `Fix this config:\n\`\`\`\nfield = ${x}\n\`\`\``,
  (x: string) => `Translate to French: "reach me at ${x} tomorrow"`,
  (x: string) => `- ${x}\n- something else`,
];

const NEGATIVES = (r: Random): string[] => [
  `The meeting is on 2024-${String(r.int(1, 12)).padStart(2, "0")}-${String(r.int(1, 28)).padStart(2, "0")} at 10:30.`,
  `Born in ${r.int(1940, 2010)}, she moved in ${r.int(1990, 2023)}.`,
  `Deadline: ${String(r.int(1, 28)).padStart(2, "0")}/${String(r.int(1, 12)).padStart(2, "0")}/${r.int(2000, 2030)}`,
  `Upgrade to v${r.int(1, 9)}.${r.int(0, 20)}.${r.int(0, 30)} before Friday.`,
  `Running node ${r.int(18, 22)}.${r.int(0, 19)}.${r.int(0, 9)} on Windows ${r.int(10, 11)}.`,
  `version ${r.int(1, 9)}.${r.int(0, 9)}.${r.int(0, 9)}.${r.int(0, 200)}`,
  `Order #${r.int(100000000, 999999999)} shipped; tracking ${r.int(10000000, 99999999)}.`,
  `Invoice INV-${r.int(2019, 2025)}-${String(r.int(1, 9999)).padStart(5, "0")} is due.`,
  `Total: $${r.int(1, 999)},${r.int(100, 999)}.${r.int(10, 99)} (${r.int(1, 99)}% off)`,
  `Pi is about 3.14159 and e about 2.71828; ${r.int(10, 99)}.${r.int(10, 99)} is close.`,
  `commit ${r.chars("0123456789abcdef", 40)}`,
  `sha256 ${r.chars("0123456789abcdef", 64)}  model.gguf`,
  `id: ${r.chars("0123456789abcdef", 8)}-${r.chars("0123456789abcdef", 4)}-4${r.chars("0123456789abcdef", 3)}-a${r.chars("0123456789abcdef", 3)}-${r.chars("0123456789abcdef", 12)}`,
  `Server listening on http://127.0.0.1:${r.int(1024, 65535)} and 0.0.0.0:${r.int(1024, 65535)}`,
  `std::vector<int> v; std::map<K, V>::iterator it; a::b::c();`,
  `The train leaves at ${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}.`,
  `Population: ${r.int(1, 9)} ${r.int(100, 999)} ${r.int(100, 999)} people.`,
  `ISBN 978-${r.int(0, 9)}-${r.int(10, 99)}-${r.int(100000, 999999)}-${r.int(0, 9)}`,
  `Use max_tokens=${r.int(16, 4096)} and temperature=0.${r.int(1, 9)}.`,
  `password: string; token?: string;`,
  `See https://example.com/home/about and https://docs.example.org/Users/guide.`,
  `Ping @${r.pick(FIRST)} on the chat about issue #${r.int(100, 9999)}.`,
  `Room ${r.int(100, 999)}, floor ${r.int(1, 30)}, building ${r.int(1, 9)}.`,
  `sk-learn-pipeline-for-beginners is a tutorial name.`,
  `Zip code ${r.int(10000, 99999)}-${r.int(1000, 9999)}.`,
  `Matrix:\n${r.int(100, 999)} ${r.int(100, 999)} ${r.int(100, 999)}\n${r.int(100, 999)} ${r.int(100, 999)} ${r.int(100, 999)}`,
];

/** Generate the corpus: positives per kind, mixed lines, negatives, then the hand-written lines. */
export function generateCorpus(): CorpusLine[] {
  const r = new Random(SEED);
  const lines: CorpusLine[] = [];
  const framed = (kind: PiiKind, value: string): void => {
    lines.push({ text: r.pick(FRAMES)(value), pii: [{ kind, value }] });
  };
  for (let i = 0; i < 50; i++) framed("email", email(r));
  for (let i = 0; i < 60; i++) {
    const v = phone(r);
    const text = r.pick([
      (x: string) => `Call me at ${x} after 6pm.`,
      (x: string) => `Tel: ${x}`,
      (x: string) => `My number is ${x}.`,
      (x: string) => `Phone (mobile): ${x}`,
      (x: string) => `Reach the office on ${x} or by mail.`,
      (x: string) => `contact,${x},active`,
    ])(v);
    lines.push({ text, pii: [{ kind: "phone", value: v }] });
  }
  for (let i = 0; i < 50; i++) {
    const v = card(r);
    const text = r.pick([
      (x: string) => `My card number is ${x}, expiry 04/27.`,
      (x: string) => `Pay with ${x} please`,
      (x: string) => `{"card": "${x}", "cvc": "123"}`,
      (x: string) => `card=${x}`,
      (x: string) => `Why was ${x} declined?`,
    ])(v);
    lines.push({ text, pii: [{ kind: "card", value: v }] });
  }
  for (let i = 0; i < 30; i++) {
    const v = iban(r);
    lines.push({
      text: r.pick([`IBAN: ${v}`, `Wire it to ${v} by Monday.`, `Konto ${v}, BIC DEUTDEFF`, `iban=${v};`]),
      pii: [{ kind: "iban", value: v }],
    });
  }
  for (let i = 0; i < 25; i++) framed("ip", ipv4(r));
  for (let i = 0; i < 15; i++) {
    const v = ipv6(r);
    lines.push({
      text: r.pick([
        `ssh admin@[${v}]`,
        `addr ${v} is unreachable`,
        `Listen [${v}]:8080`,
        `client ${v} connected`,
      ]),
      pii: [{ kind: "ip", value: v }],
    });
  }
  for (let i = 0; i < 70; i++) {
    const s = secret(r);
    lines.push({
      text: r.next() < 0.5 ? s.text : `Why does this fail?\n${s.text}\nError: 401`,
      pii: [{ kind: "secret", value: s.value }],
    });
  }
  for (let i = 0; i < 35; i++) {
    const p = homePath(r);
    lines.push({
      text: r.pick([
        `Error: ENOENT: no such file ${p.text}`,
        `at main (${p.text}:12:7)`,
        `open ${p.text}`,
        `cd ${p.text}`,
      ]),
      pii: [{ kind: "path", value: p.value }],
    });
  }
  for (let i = 0; i < 20; i++) {
    const e = email(r);
    const p = phone(r);
    const c = card(r);
    lines.push({
      text: `Name: ${r.pick(FIRST)}\nEmail: ${e}\nPhone: ${p}\nCard: ${c}`,
      pii: [
        { kind: "email", value: e },
        { kind: "phone", value: p },
        { kind: "card", value: c },
      ],
    });
  }
  for (let i = 0; i < 4; i++) for (const text of NEGATIVES(r)) lines.push({ text, pii: [] });
  for (let i = 0; i < 20; i++)
    lines.push({
      text: `Card ${card(r, false)} (a typo, fails the Luhn check)`,
      pii: [],
      note: "invalid Luhn",
    });
  for (let i = 0; i < 10; i++)
    lines.push({ text: `IBAN ${iban(r, false)} (wrong check digits)`, pii: [], note: "invalid mod-97" });
  return [...lines, ...TRICKY_LINES];
}

/** The JSONL text of the corpus (what the committed file holds). */
export function corpusJsonl(lines: CorpusLine[] = generateCorpus()): string {
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const lines = generateCorpus();
  writeFileSync(CORPUS_PATH, corpusJsonl(lines));
  console.log(`wrote ${lines.length} lines to ${CORPUS_PATH}`);
}
