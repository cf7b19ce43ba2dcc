import { describe, expect, it } from "vitest";
import type { CaseReport, ContractReport } from "../contract/contract-verdict";
import {
  encodeTaught,
  judgeTaught,
  judgeTaughtRun,
  taughtContract,
  taughtOf,
  taughtSuiteFrom,
  TAUGHT_MAX_DROP,
  withTaught,
  type TaughtSuite,
} from "./taught-suite";

const line = (q: string, a: string) => ({
  messages: [
    { role: "system", content: "You are helpful." },
    { role: "user", content: q },
    { role: "assistant", content: a },
  ],
});

const A = taughtSuiteFrom(
  [
    line("Capital of Australia?", "Canberra is the capital of Australia."),
    line("Which city is Australia's capital?", "Canberra is the capital of Australia."),
    line("Where does Australia's government sit?", "In Canberra, the capital of Australia."),
  ],
  "chat",
  "1.0.0",
);
const B = taughtSuiteFrom(
  [
    line("When does water boil?", "Water boils at 100 degrees Celsius at sea level."),
    line("Boiling point of water?", "Water boils at 100 degrees Celsius at sea level."),
  ],
  "chat",
  "1.1.0",
);

/** A run of taughtContract as the runner reports it: the candidate's and live's outputs. */
function run(outputs: Record<string, [string, string | null]>): ContractReport {
  const cases = Object.entries(outputs).map(
    ([id, [out, live]]) =>
      ({
        id,
        description: "",
        tags: [],
        mode: "chat",
        passed: true,
        score: 1,
        assertions: [],
        output: out,
        adapters: [],
        latencyMs: 1,
        stopReason: "eos",
        error: null,
        live:
          live === null
            ? null
            : { passed: true, score: 1, output: live, adapters: [], error: null, shared: false },
        change: null,
      }) satisfies CaseReport,
  );
  return {
    contract: "taught",
    version: "1.0.0",
    startedAt: 0,
    durationMs: 1,
    passed: true,
    passRate: 1,
    threshold: 0,
    failing: [],
    byTag: {},
    cases,
    candidate: null,
    comparison: null,
    reasons: [],
  };
}

describe("taught suites", () => {
  it("are the held-out lines' last answers with the conversation before them, ids per version", () => {
    expect(A).toMatchObject({ id: "chat@1.0.0", domain: "chat", version: "1.0.0", acceptedRate: null });
    expect(A.cases[0]).toEqual({
      id: "chat-taught-1.0.0-1",
      conversation: [{ role: "user", content: "Capital of Australia?" }],
      answer: "Canberra is the capital of Australia.",
    });
    const contract = taughtContract([A, B]);
    expect(contract.cases.map((c) => c.id)).toEqual([...A.cases, ...B.cases].map((c) => c.id));
    expect(contract.cases[0]).toMatchObject({ mode: "chat", tags: ["taught", "taught:chat@1.0.0"] });
    expect(taughtOf({ taught: encodeTaught([A, B], true) }).map((s) => s.id)).toEqual([
      "chat@1.0.0",
      "chat@1.1.0",
    ]);
    expect(taughtOf({})).toEqual([]);
    // By default the lineage names the suites but carries none of the users' cases.
    const idsOnly = encodeTaught([A, B]);
    expect(idsOnly).toEqual({ ids: ["chat@1.0.0", "chat@1.1.0"] });
    expect(JSON.stringify(idsOnly)).not.toContain(A.cases[0]!.answer);
    expect(taughtOf({ taught: idsOnly })).toEqual([]);
  });

  it("judge right answers by content, not form", () => {
    const taught = "Canberra is the capital of Australia.";
    expect(judgeTaught("canberra — capital of australia", taught).passed).toBe(true);
    expect(judgeTaught("**Canberra** is Australia's capital", taught).passed).toBe(true);
    // Right format, wrong topic (answers swapped between topics); a constant greeting.
    expect(judgeTaught("Water boils at 100 degrees Celsius at sea level.", taught)).toMatchObject({
      passed: false,
      detail: expect.stringContaining("missing: canberra") as unknown,
    });
    expect(judgeTaught("Hello! How can I help you today?", taught).passed).toBe(false);
    // Every topic at once is not right either.
    const dump = `${taught} Water boils at 100 degrees Celsius. Paris is in France. Rome is in Italy. Tokyo is big. Cats purr loudly.`;
    expect(judgeTaught(dump, taught).passed).toBe(false);
  });

  it("a forgetting candidate is rejected, naming the failing taught cases of the earlier suite", () => {
    const rightA = "Canberra is the capital of Australia.";
    const rightB = "Water boils at 100 degrees Celsius at sea level.";
    const outputs: Record<string, [string, string | null]> = {};
    for (const c of A.cases) outputs[c.id] = [rightB, rightA]; // the candidate forgot A; live knows it
    for (const c of B.cases) outputs[c.id] = [rightB, "I do not know."];
    const earlier = { ...A, acceptedRate: 1 };
    const verdict = judgeTaughtRun(run(outputs), [earlier, B], B.id);
    expect(verdict.passed).toBe(false);
    expect(verdict.failing).toEqual(A.cases.map((c) => c.id));
    expect(verdict.suites).toMatchObject([
      {
        id: "chat@1.0.0",
        own: false,
        candidateRate: 0,
        liveRate: 1,
        required: 1 - TAUGHT_MAX_DROP,
        ok: false,
      },
      { id: "chat@1.1.0", own: true, candidateRate: 1, ok: true },
    ]);
    expect(verdict.reasons[0]).toMatch(/chat@1\.0\.0 forgotten: 0\/3 right.*chat-taught-1\.0\.0-1/);

    const merged = withTaught(run({}), verdict);
    expect(merged.passed).toBe(false);
    expect(merged.failing).toEqual(A.cases.map((c) => c.id));
    expect(merged.cases.find((c) => c.id === A.cases[0]!.id)).toMatchObject({
      passed: false,
      change: "broken",
    });
  });

  it("a candidate that keeps the earlier suite and learned its own passes", () => {
    const outputs: Record<string, [string, string | null]> = {};
    for (const c of A.cases) outputs[c.id] = [c.answer, c.answer];
    for (const c of B.cases) outputs[c.id] = [c.answer, "?"];
    const verdict = judgeTaughtRun(run(outputs), [A, B], B.id);
    expect(verdict).toMatchObject({ passed: true, failing: [], reasons: [] });
  });

  it("its own suite must reach the stated rate; with nothing live an earlier suite keeps its accepted rate", () => {
    const outputs: Record<string, [string, string | null]> = {};
    for (const c of A.cases) outputs[c.id] = ["Hello!", null];
    for (const c of B.cases) outputs[c.id] = ["Hello!", null];
    const suites: TaughtSuite[] = [{ ...A, acceptedRate: 0.67 }, B];
    const verdict = judgeTaughtRun(run(outputs), suites, B.id);
    expect(verdict.suites.map((s) => [s.id, s.ok, s.required])).toEqual([
      ["chat@1.0.0", false, 0.67 - TAUGHT_MAX_DROP],
      ["chat@1.1.0", false, 0.5],
    ]);
    expect(verdict.reasons[1]).toMatch(/chat@1\.1\.0 \(this cycle\): 0\/2 right/);
  });
});
