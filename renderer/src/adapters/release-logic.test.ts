import { describe, expect, it } from "vitest";
import type { ContractSummary, Release, UpdateProgress } from "../../../electron/api";
import {
  describeCheck,
  describeContract,
  describeGate,
  describePrune,
  describeUpdate,
  describeUpdateItem,
  downloadFraction,
  failingCases,
  formatCases,
  gateNotice,
  prependRelease,
  prunable,
  releaseRow,
  shortSha,
  versionBadge,
  versionStatusLabel,
} from "./release-logic";
import { gateProgress as gate, versionInfo as version } from "../testing/fixtures";

const nameOf = (id: string) => ({ coding: "Coding", chat: "Chat" })[id] ?? id;

function update(over: Partial<UpdateProgress>): UpdateProgress {
  return {
    state: "checking",
    adapterId: null,
    version: null,
    receivedBytes: null,
    totalBytes: null,
    message: null,
    ...over,
  };
}

const contract: ContractSummary = {
  contract: "macaron-default",
  version: "1.0.0",
  passed: false,
  reasons: ["tag coding: 50% of 2 cases pass, needs 60%"],
  passRate: 0.5,
  failing: ["coding-pinned", "coding-auto"],
  durationMs: 1234,
  startedAt: 0,
  cases: [
    { id: "chat-hello", description: "greets", passed: true, output: "hi", latencyMs: 3, failures: [] },
    {
      id: "coding-pinned",
      description: "pinned coding answers in code",
      passed: false,
      output: "uuuu",
      latencyMs: 4,
      failures: [{ type: "regex", detail: "output does not match /^\\{/" }],
    },
  ],
};

describe("version status", () => {
  it("labels every status", () => {
    expect(
      ["live", "staged", "evaluating", "rejected", "retired"].map((s) => versionStatusLabel(s as never)),
    ).toEqual(["Live", "Staged", "Evaluating…", "Rejected", "Retired"]);
  });

  it("shows the gate's progress on a staged version, not on a decided one", () => {
    expect(versionBadge({ status: "staged" }, gate({ done: 3 }))).toMatchObject({
      label: "Evaluating…",
      progress: "3/6 cases",
      done: 3,
      total: 6,
    });
    expect(versionBadge({ status: "staged" }, gate({ state: "queued" })).label).toBe(
      "Waiting for the contract",
    );
    expect(versionBadge({ status: "live" }, gate({ done: 3 })).label).toBe("Live");
    expect(versionBadge({ status: "rejected" }, gate({ state: "failed" }))).toMatchObject({
      label: "Rejected",
      tone: "error",
      progress: null,
    });
    expect(versionBadge({ status: "evaluating" })).toMatchObject({ label: "Evaluating…", tone: "busy" });
  });

  it("formats case counts", () => {
    expect(formatCases(3, 6)).toBe("3/6 cases");
    expect(formatCases(1, 1)).toBe("1/1 case");
  });
});

describe("gate", () => {
  it("describes each state", () => {
    expect(describeGate(gate({ done: 2, caseId: "coding-auto" }))).toBe(
      "Running the contract: 2/6 cases (coding-auto)",
    );
    expect(describeGate(gate({ state: "failed", failing: ["a", "b"] }))).toBe("Failed the contract: a, b");
    expect(describeGate(gate({ state: "error", message: "no model" }))).toBe(
      "The contract could not run: no model",
    );
  });

  it("makes a notice only once decided", () => {
    expect(gateNotice(gate({ state: "passed" }), nameOf)).toEqual({
      text: "Coding 1.1.0 is live",
      tone: "ok",
    });
    expect(
      gateNotice(
        gate({ version: "1.2.0", state: "failed", failing: ["coding-pinned", "coding-auto"] }),
        nameOf,
      ),
    ).toEqual({
      text: "Coding 1.2.0 failed the contract: coding-pinned, coding-auto",
      tone: "error",
    });
    expect(gateNotice(gate({ state: "error", message: "boom" }), nameOf)?.text).toBe(
      "Coding 1.1.0 could not be evaluated: boom",
    );
    expect(gateNotice(gate({ state: "running" }), nameOf)).toBeNull();
    expect(gateNotice(gate({ state: "queued", adapterId: "mystery" }), nameOf)).toBeNull();
  });
});

describe("contract results", () => {
  it("summarizes a run and lists the failing cases with their assertion details", () => {
    expect(describeContract(contract)).toBe("Failed macaron-default 1.0.0: 1/2 cases passed in 1.2 s");
    expect(failingCases(contract)).toEqual([
      {
        id: "coding-pinned",
        description: "pinned coding answers in code",
        details: ["regex: output does not match /^\\{/"],
      },
      { id: "coding-auto", description: "", details: [] },
    ]);
  });

  it("shows the live version's verdict and reason beside a failing case's", () => {
    const compared: ContractSummary = {
      ...contract,
      failing: ["chat-01"],
      cases: [
        {
          id: "chat-01",
          description: "held-out chat",
          passed: false,
          output: "Hello!",
          latencyMs: 3,
          failures: [
            { type: "distinct", detail: "degenerate: the same answer as chat-02 (different questions)" },
          ],
          reason: "distinct: degenerate: the same answer as chat-02 (different questions)",
          live: { passed: true, reason: "passed: mentions: mentions knitt (1 of 1 key terms, needs 1)" },
        },
      ],
    };
    expect(failingCases(compared)[0]?.details).toEqual([
      "distinct: degenerate: the same answer as chat-02 (different questions)",
      "live version: passed (passed: mentions: mentions knitt (1 of 1 key terms, needs 1))",
    ]);
  });
});

describe("pruning", () => {
  it("counts the kept files of retired and rejected versions only", () => {
    const list = [
      version({ version: "3.0.0", status: "rejected", sizeBytes: 100 }),
      version({ version: "2.0.0", status: "live", sizeBytes: 1000 }),
      version({ version: "1.0.0", status: "retired", sizeBytes: 10 }),
      version({ version: "0.9.0", status: "retired", sizeBytes: 5, fileKept: false }),
      version({ version: "4.0.0", status: "staged", sizeBytes: 7 }),
    ];
    expect(prunable(list)).toEqual({ count: 2, bytes: 110 });
    expect(describePrune({ deletedFiles: 2, freedBytes: 2048 })).toBe(
      "Deleted 2 old version files, freed 2 KB.",
    );
    expect(describePrune({ deletedFiles: 0, freedBytes: 0 })).toBe("No old version files to delete.");
  });
});

describe("updates", () => {
  it("describes progress, with the download's share", () => {
    expect(describeUpdate(update({}), nameOf)).toBe("Checking for updates…");
    const downloading = update({
      state: "downloading",
      adapterId: "coding",
      version: "2.0.0",
      receivedBytes: 512,
      totalBytes: 2048,
    });
    expect(downloadFraction(downloading)).toBe(0.25);
    expect(describeUpdate(downloading, nameOf)).toBe("Downloading Coding 2.0.0: 512 B of 2 KB (25%)");
    expect(downloadFraction(update({ receivedBytes: 5, totalBytes: null }))).toBeNull();
    expect(
      describeUpdate(update({ state: "verifying", adapterId: "coding", version: "2.0.0" }), nameOf),
    ).toBe("Verifying Coding 2.0.0…");
    expect(describeUpdate(update({ state: "failed", message: "the registry answered 500" }), nameOf)).toBe(
      "Update check failed: the registry answered 500",
    );
    expect(
      describeUpdate(
        update({ state: "failed", adapterId: "chat", version: "2.0.0", message: "sha256 mismatch" }),
        nameOf,
      ),
    ).toBe("Chat 2.0.0 was refused: sha256 mismatch");
    expect(describeUpdate(update({ state: "idle" }), nameOf)).toBeNull();
  });

  it("summarizes a check and where each version stands", () => {
    const check = {
      checkedAt: 0,
      available: [
        { adapterId: "coding", version: "2.0.0", sizeBytes: 1, releaseNotes: "" },
        { adapterId: "coding", version: "3.0.0", sizeBytes: 1, releaseNotes: "" },
      ],
      results: [],
    };
    expect(describeCheck(check, nameOf)).toBe("Found 2 new versions: Coding 2.0.0, Coding 3.0.0.");
    expect(describeCheck({ ...check, available: [] }, nameOf)).toBe("No new versions.");
    expect(describeUpdateItem(undefined, undefined)).toBe("Waiting to download");
    expect(
      describeUpdateItem(update({ state: "downloading", receivedBytes: 1, totalBytes: 2 }), undefined),
    ).toBe("Downloading (50%)");
    expect(describeUpdateItem(update({ state: "failed", message: "bad" }), undefined)).toBe("Refused: bad");
    expect(describeUpdateItem(update({ state: "staged" }), gate({ state: "passed" }))).toBe(
      "Passed the contract: live now",
    );
    expect(describeUpdateItem(update({ state: "staged" }), gate({ done: 3 }))).toBe(
      "Running the contract: 3/6 cases",
    );
  });
});

describe("releases", () => {
  const release: Release = {
    id: 7,
    baseModelSha256: "0123456789abcdef".repeat(4),
    harnessVersion: "0.1.0+h1",
    contractVersion: "macaron-default@1.0.0",
    adapters: [
      { id: "coding", version: "2.0.0", sha256: "x" },
      { id: "chat", version: "1.0.0", sha256: "y" },
    ],
    reason: "promote",
    detail: "coding 1.0.0 → 2.0.0",
    createdAt: 0,
  };

  it("reads as a history row", () => {
    expect(releaseRow(release, nameOf)).toEqual({
      id: 7,
      reason: "Promoted",
      detail: "coding 1.0.0 → 2.0.0",
      baseModel: "0123456789ab",
      harness: "0.1.0+h1",
      contract: "macaron-default@1.0.0",
      adapters: "Chat 1.0.0, Coding 2.0.0",
    });
    expect(releaseRow({ ...release, adapters: [], reason: "rollback" }, nameOf)).toMatchObject({
      reason: "Rolled back",
      adapters: "Base model only",
    });
    expect(shortSha(null)).toBe("unknown");
  });

  it("puts a new release first, once, and leaves an unloaded list unloaded", () => {
    const older = { ...release, id: 6 };
    expect(prependRelease([older], release)?.map((r) => r.id)).toEqual([7, 6]);
    expect(prependRelease([release, older], release)?.map((r) => r.id)).toEqual([7, 6]);
    expect(prependRelease(null, release)).toBeNull();
  });
});
