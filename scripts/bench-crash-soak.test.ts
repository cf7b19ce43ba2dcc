import { expect, it } from "vitest";
import { parseSoakOutput } from "../bench/crash-soak";

it("reads the crash-safety test's summary line, and nothing from a run that did not print it", () => {
  // As printed by electron/server/crash-safety.test.ts in a CI run (100 kills then).
  const output = [
    "stdout | electron/server/crash-safety.test.ts > the server killed with SIGKILL 100 times",
    "crash-safety: 100 kills in 537.5 s (5375 ms each, of which start-up 3338 ms); 80 acknowledged, " +
      "20 killed before the answer, 20 partial answers kept",
    " ✓ electron/server/crash-safety.test.ts (1 test) 541414ms",
  ].join("\n");
  expect(parseSoakOutput(output)).toEqual({
    kills: 100,
    seconds: 537.5,
    msPerKill: 5375,
    startMs: 3338,
    acknowledged: 80,
    unacknowledged: 20,
    partialKept: 20,
  });
  expect(parseSoakOutput(" ✗ electron/server/crash-safety.test.ts (1 test | 1 failed)")).toBeNull();
});
