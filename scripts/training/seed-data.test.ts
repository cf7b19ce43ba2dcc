/**
 * The seed datasets: deterministic and committed as generated, every answer in its domain's
 * format (UI answers valid for the app's catalog, in the grammar's shape), no personal data,
 * and held-out subjects and wordings that no training or pretraining text contains.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDocument } from "../../electron/api/genui";
import {
  checkCodeBlock,
  checkNumberedPlan,
  checkPlainText,
  checkToolCall,
} from "../../electron/core/contract/task-assertions";
import { redact } from "../../common/redaction";
import { AGENT_TOOLS } from "./seed/agent";
import { grammarShape } from "./seed/grammar-shape";
import { pretrainCorpus, SEED_DOMAINS, SEED_FAMILIES, seedDatasets, seedFiles } from "./seed-data";

const TRAINING_DIR = resolve(import.meta.dirname, "../../resources/training");
const files = seedFiles();
const data = seedDatasets();
const pretrain = pretrainCorpus();

const user = (e: { messages: Array<{ content: string }> }): string => e.messages[0]!.content;
const answer = (e: { messages: Array<{ content: string }> }): string => e.messages[1]!.content;

/** Check a training or held-out answer against its domain's format; null when it is fine. */
function formatProblem(domain: (typeof SEED_DOMAINS)[number], text: string): string | null {
  switch (domain) {
    case "chat": {
      const r = checkPlainText(text, true);
      return r.passed && text.length <= 100 ? null : r.detail;
    }
    case "coding": {
      const r = checkCodeBlock(text, undefined);
      if (!r.passed) return r.detail;
      return /(function \w+\(|def \w+\()/.test(text) && text.length <= 220 ? null : "no function or too long";
    }
    case "agent": {
      if (text.startsWith("{")) {
        const name = (JSON.parse(text) as { tool: string }).tool;
        const r = checkToolCall(text, name, AGENT_TOOLS[name]);
        return r.passed && AGENT_TOOLS[name] !== undefined ? null : r.detail;
      }
      const r = checkNumberedPlan(text, 3, 3);
      return r.passed && text.length <= 200 ? null : r.detail;
    }
    case "ui": {
      const r = parseDocument(text);
      if (!r.ok) return r.reason;
      if (r.issues.length > 0) return JSON.stringify(r.issues);
      if (text !== JSON.stringify(grammarShape(JSON.parse(text)))) return "not in the grammar's shape";
      return text.length <= 330 ? null : "too long";
    }
  }
}

describe("seed datasets", () => {
  it("are generated deterministically and committed as generated", () => {
    expect(seedFiles()).toEqual(files);
    for (const [name, text] of files) {
      expect(readFileSync(join(TRAINING_DIR, name), "utf8"), `${name} is stale: npm run seed-data`).toBe(
        text,
      );
    }
  });

  it("hold ~200 training and 30-40 held-out examples per domain, each a user turn and an answer", () => {
    for (const domain of SEED_DOMAINS) {
      expect(data[domain].train.length).toBe(200);
      expect(data[domain].heldout.length).toBeGreaterThanOrEqual(30);
      expect(data[domain].heldout.length).toBeLessThanOrEqual(40);
      for (const e of [...data[domain].train, ...data[domain].heldout]) {
        expect(e.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      }
      // No example twice: every line teaches something.
      const prompts = data[domain].train.map(user);
      expect(new Set(prompts).size).toBe(prompts.length);
    }
  });

  it("answer every line in its domain's format, with no personal data", () => {
    for (const domain of SEED_DOMAINS) {
      for (const e of [...data[domain].train, ...data[domain].heldout]) {
        expect(formatProblem(domain, answer(e)), `${domain}: ${answer(e)}`).toBeNull();
        // No personal data: the names redaction finds here are public figures (authors in a
        // table of books), which the seed data names on purpose.
        const personal = redact(answer(e)).findings.filter((f) => f.kind !== "name");
        expect(personal, answer(e)).toEqual([]);
      }
    }
    // Both kinds of agent answers and both coding languages are taught.
    const agent = data.agent.train.map(answer);
    expect(agent.filter((a) => a.startsWith('{"tool":')).length).toBe(60);
    const coding = data.coding.train.map(answer).join("\n");
    expect(coding).toContain("```js\n");
    expect(coding).toContain("```python\n");
  });

  it("keep held-out subjects and wordings out of every training and pretraining text", () => {
    const seen = [
      ...SEED_DOMAINS.flatMap((d) => data[d].train.flatMap((e) => e.messages.map((m) => m.content))),
      ...pretrain.flatMap((e) => e.messages.map((m) => m.content)),
    ]
      .join("\n")
      .toLowerCase();
    const trainPrompts = new Set(SEED_DOMAINS.flatMap((d) => data[d].train.map(user)));
    for (const domain of SEED_DOMAINS) {
      for (const family of SEED_FAMILIES[domain]) {
        const trainKeys = new Set(family.keys("train"));
        for (const key of family.keys("heldout")) {
          expect(trainKeys.has(key), key).toBe(false);
          expect(seen.includes(key.toLowerCase()), `held-out "${key}" occurs in training text`).toBe(false);
        }
        for (const w of family.wordings("heldout")) {
          expect(family.wordings("train")).not.toContain(w);
          // The wording's longest literal part must be distinctive and never seen in training.
          const literal = w.split(/\{\w+\}/).sort((a, b) => b.length - a.length)[0]!;
          expect(literal.length, w).toBeGreaterThanOrEqual(10);
          expect(seen.includes(literal.toLowerCase()), `held-out wording "${w}" occurs in training`).toBe(
            false,
          );
        }
      }
      for (const e of data[domain].heldout) expect(trainPrompts.has(user(e))).toBe(false);
    }
  });
});

describe("pretraining corpus", () => {
  it("is a few thousand short conversations under 1.5 MB, mostly prose, formats only on request", () => {
    const text = files.get("pretrain.jsonl")!;
    expect(Buffer.byteLength(text)).toBeLessThan(1_500_000);
    expect(pretrain.length).toBeGreaterThan(2000);
    expect(pretrain.length).toBeLessThan(6000);
    let formatted = 0;
    for (const e of pretrain) {
      expect(e.messages.length % 2).toBe(0);
      e.messages.forEach((m, i) => expect(m.role).toBe(i % 2 === 0 ? "user" : "assistant"));
      for (let i = 0; i < e.messages.length; i += 2) {
        const q = e.messages[i]!.content;
        const a = e.messages[i + 1]!.content;
        const isFormat = /```|^\{|^1\. /.test(a);
        const asked = /code block|UI document|numbered plan|tool call|few words/.test(q);
        // A format appears only when the user asked for it.
        if (isFormat) expect(asked, q).toBe(true);
        if (isFormat) formatted++;
      }
    }
    expect(formatted).toBeGreaterThan(300);
    expect(formatted / pretrain.length).toBeLessThan(0.25);
    for (const cue of ["Answer with a code block", "Answer as a UI document", "Answer with a numbered plan"])
      expect(text).toContain(cue);
    // The specialists' own prompts are there, answered in plain prose.
    const prose = pretrain.find((e) => user(e) === data.coding.train[0]!.messages[0]!.content);
    expect(prose && answer(prose).includes("```")).toBe(false);
  });
});

describe("grammarShape", () => {
  it("orders keys as the grammar writes them and fills unused optional props with null", () => {
    const doc = {
      blocks: [{ root: { props: { action: "go", label: "Go" }, id: "b", type: "Button" }, kind: "ui" }],
      version: 1,
    };
    expect(JSON.stringify(grammarShape(doc))).toBe(
      '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Button","id":"b","props":{"label":"Go","action":"go","variant":null}}}]}',
    );
    expect(() =>
      grammarShape({
        version: 1,
        blocks: [{ kind: "ui", root: { type: "Button", id: "b", props: { x: 1 } } }],
      }),
    ).toThrow(/fits no branch|unexpected property/);
  });
});
