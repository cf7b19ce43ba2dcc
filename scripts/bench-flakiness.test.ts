import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { filesOfReport, readRounds, type Round, summarize } from "../bench/flakiness";
import { testDir } from "../testing/core/temp-dir";

const ROOT = "/repo";

/** The shape of vitest's JSON report (`--reporter=json`) for three files. */
const report = {
  numTotalTests: 4,
  testResults: [
    {
      name: "/repo/a/ok.engine.test.ts",
      status: "passed",
      message: "",
      assertionResults: [{ fullName: "a passes", status: "passed", title: "passes" }],
    },
    {
      name: "/repo/b/one-fails.engine.test.ts",
      status: "failed",
      message: "",
      assertionResults: [
        { fullName: "b first", status: "passed" },
        { fullName: "b second", status: "failed" },
      ],
    },
    {
      name: "/repo/c/hook-fails.engine.test.ts",
      status: "failed",
      message: "Hook timed out in 60000ms",
      assertionResults: [{ fullName: "c never ran", status: "skipped" }],
    },
  ],
};

function round(head: string, files: Round["files"]): Round {
  return { head, startedAt: "2026-12-04T00:00:00.000Z", seconds: 1, busyCores: 1, load: [1, 1], files };
}

describe("flakiness bench", () => {
  it("reads each file's verdict and failed tests from vitest's JSON report, paths from the root", () => {
    expect(filesOfReport(report, ROOT)).toEqual({
      "a/ok.engine.test.ts": { ok: true, failed: [] },
      "b/one-fails.engine.test.ts": { ok: false, failed: ["b second"] },
      // A file failing outside its tests (a hook, an import) still counts, with its message.
      "c/hook-fails.engine.test.ts": {
        ok: false,
        failed: ["(the file itself)"],
        message: "Hook timed out in 60000ms",
      },
    });
  });

  it("refuses a report that is not vitest's", () => {
    expect(() => filesOfReport({ results: [] }, ROOT)).toThrow();
  });

  it("sums rounds per file: runs, failed rounds, and each failing test with the commits it failed at", () => {
    const summary = summarize([
      round("aaa", { "x.test.ts": { ok: true, failed: [] }, "y.test.ts": { ok: false, failed: ["y t"] } }),
      round("bbb", {
        "x.test.ts": { ok: false, failed: ["x t"] },
        "y.test.ts": { ok: false, failed: ["y t"] },
      }),
      round("bbb", { "x.test.ts": { ok: true, failed: [] } }),
    ]);
    expect(summary).toEqual([
      {
        file: "y.test.ts",
        runs: 2,
        failures: 2,
        failedTests: { "y t": { count: 2, heads: ["aaa", "bbb"] } },
      },
      { file: "x.test.ts", runs: 3, failures: 1, failedTests: { "x t": { count: 1, heads: ["bbb"] } } },
    ]);
  });

  it("reads the recorded rounds, skipping a line that is not one (a torn append) instead of failing", async () => {
    const path = join(testDir(), "rounds.jsonl");
    expect(await readRounds(path)).toEqual([]);
    const good = round("ccc", { "z.test.ts": { ok: true, failed: [] } });
    writeFileSync(path, `${JSON.stringify(good)}\n{"head":"torn\n\n${JSON.stringify(good)}\n`);
    expect(await readRounds(path)).toEqual([good, good]);
  });
});
