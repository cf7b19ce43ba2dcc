import { expect, it } from "vitest";
import { formatCrashSummary, parseCrashSummary } from "../testing/server/crash-summary";

it("reads back the crash-safety summary it formats, and nothing from a run that did not print it", () => {
  const summary = {
    kills: 100,
    seconds: 537.5,
    msPerKill: 5375,
    startMs: 3338,
    acknowledged: 80,
    unacknowledged: 20,
    partialKept: 20,
  };
  const line = formatCrashSummary({ ...summary, seconds: 537.46, msPerKill: 5374.6, startMs: 3337.8 });
  // As a CI run printed it (100 kills then), inside vitest's other output.
  expect(line).toBe(
    "crash-safety: 100 kills in 537.5 s (5375 ms each, of which start-up 3338 ms); 80 acknowledged, " +
      "20 killed before the answer, 20 partial answers kept",
  );
  expect(parseCrashSummary(`stdout | electron/server/crash-safety.test.ts\n${line}\n ✓ 1 test`)).toEqual(
    summary,
  );
  expect(parseCrashSummary(" ✗ electron/server/crash-safety.test.ts (1 test | 1 failed)")).toBeNull();
});
