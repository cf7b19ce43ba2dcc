/**
 * `npm run contract` on the demo fixtures with the real engine: the fixture adapters (which
 * answer with markers, not tasks) pass the smoke contract; a "coding" adapter built from the UI
 * spec (answers "uuuu") fails it, and the failing cases are named. One run goes through the
 * real CLI process for the exit code.
 */
import { execFile } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256File } from "../../../common/hashing";
import { writeFixtures, type FixturePaths } from "../../../native/gguf/fixtures";
import { demoAdapterSpec } from "../../../native/gguf/adapters";
import { gv, writeGguf } from "../../../native/gguf/writer";
import { suiteDir } from "../../../testing/core/temp-dir";
import { runContractCommand } from "./contract-command";
import type { ContractReport } from "./contract-runner";
import { defaultContract } from "./default-contract";

const dir = suiteDir("macaron-contract-cli-");
let fixtures: FixturePaths;
let brokenDir: string;
const env = { ...process.env, MACARON_ENGINE_THREADS: "1" };
const SMOKE = join(import.meta.dirname, "../../../resources/contracts/smoke.json");

beforeAll(async () => {
  process.env.MACARON_ENGINE_THREADS = "1";
  fixtures = await writeFixtures(join(dir.path, "fx"));
  // "coding" v3, built from the UI spec: a well-formed adapter that answers "uuuu".
  brokenDir = join(dir.path, "broken");
  cpSync(fixtures.adaptersDir, brokenDir, { recursive: true });
  const spec = demoAdapterSpec("ui");
  await writeGguf(join(brokenDir, "coding.gguf"), {
    ...spec,
    metadata: { ...spec.metadata, "general.name": gv.str("coding v3 (broken)") },
  });
  const manifest = JSON.parse(readFileSync(join(brokenDir, "coding.json"), "utf8")) as Record<
    string,
    unknown
  >;
  writeFileSync(
    join(brokenDir, "coding.json"),
    JSON.stringify({
      ...manifest,
      version: "3.0.0",
      sha256: await sha256File(join(brokenDir, "coding.gguf")),
    }),
  );
});

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe("npm run contract", () => {
  it("passes the smoke contract with the fixture adapters and writes the JSON report", async () => {
    const json = join(dir.path, "report.json");
    const t = io();
    const { code } = await runContractCommand(
      ["--model", fixtures.basePath, "--adapters", fixtures.adaptersDir, "--contract", SMOKE, "--json", json],
      t.io,
    );
    expect(t.err).toEqual([]);
    expect(code).toBe(0);
    expect(t.out.join("\n")).toMatch(/PASSED/);
    const report = JSON.parse(readFileSync(json, "utf8")) as ContractReport;
    expect(report).toMatchObject({
      contract: "macaron-smoke",
      version: "1.0.0",
      passed: true,
      failing: [],
    });
    expect(report.cases.find((c) => c.id === "coding-auto")?.adapters).toEqual(["coding@1.0.0"]);
    expect(Object.keys(report.byTag)).toEqual(expect.arrayContaining(["chat", "coding", "agent", "ui"]));
  });

  it("fails a broken coding adapter with a non-zero exit naming the failing cases", async () => {
    const json = join(dir.path, "broken.json");
    const cli = promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "electron/core/contract/cli.ts",
        "--model",
        fixtures.basePath,
        "--adapters",
        brokenDir,
        "--contract",
        SMOKE,
        "--json",
        json,
      ],
      { env },
    );
    const failure = (await cli.then(
      () => null,
      (err: unknown) => err,
    )) as { code: number; stdout: string } | null;
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toMatch(/FAILED: 2 failing case\(s\): coding-pinned, coding-auto/);
    const report = JSON.parse(readFileSync(json, "utf8")) as ContractReport;
    expect(report.failing).toEqual(["coding-pinned", "coding-auto"]);
    expect(report.byTag.coding).toMatchObject({ passed: 0, total: 2, ok: false });
  });

  it("rejects constant-answer adapters under the default contract (v3): same answer to different questions", async () => {
    // The fixture adapters answer every prompt with their marker ("cccc…", "{{{{…"): right in
    // format for nothing and the same for every question. A few of each domain's held-out cases
    // of the default contract, answers cut short to keep the run small.
    const full = defaultContract();
    const pick = (domain: string) =>
      full.cases.filter((c) => c.tags.includes(domain) && !c.tags.includes("router"));
    const cases = [...pick("chat").slice(0, 3), ...pick("coding").slice(0, 3)].map((c) => ({
      ...c,
      maxTokens: 12,
    }));
    const file = join(dir.path, "default-subset.json");
    writeFileSync(file, JSON.stringify({ ...full, cases }));
    const t = io();
    const { code, report } = await runContractCommand(
      ["--model", fixtures.basePath, "--adapters", fixtures.adaptersDir, "--contract", file],
      t.io,
    );
    expect(code).toBe(1);
    expect(report!.failing).toEqual(cases.map((c) => c.id));
    for (const c of report!.cases) {
      const distinct = c.assertions.find((a) => a.type === "distinct");
      expect(distinct, c.id).toMatchObject({
        passed: false,
        detail: expect.stringMatching(/^degenerate: the same answer as/) as unknown,
      });
    }
    expect(t.out.join("\n")).toMatch(/✗ distinct: degenerate: the same answer as/);
  });

  it("answers UI-mode cases under the catalog grammar and reports how each generation ended", async () => {
    // The fixture UI adapter alone would print "uuuu": the grammar makes it write a document.
    const file = join(dir.path, "ui-mode.json");
    writeFileSync(
      file,
      JSON.stringify({
        contract: "ui-mode",
        version: "1.0.0",
        cases: [
          {
            id: "ui-form",
            conversation: [{ role: "user", content: "Show me a sign-up form." }],
            mode: "ui",
            format: "ui",
            maxTokens: 48,
            assertions: [{ type: "genuiDocument" }, { type: "stopsOnItsOwn" }],
          },
        ],
      }),
    );
    const t = io();
    const { code, report } = await runContractCommand(
      ["--model", fixtures.basePath, "--adapters", fixtures.adaptersDir, "--contract", file],
      t.io,
    );
    expect(code).toBe(1);
    const c = report!.cases[0]!;
    expect(c.output).toMatch(/^\{\s*"version":\s*1,\s*"blocks":/);
    expect(c.stopReason).toBe("maxTokens");
    expect(c.assertions.map((a) => [a.type, a.passed])).toEqual([
      ["genuiDocument", false],
      ["stopsOnItsOwn", false],
    ]);
  });

  it("refuses bad arguments and an invalid contract with exit code 2", async () => {
    const t = io();
    expect((await runContractCommand(["--model", fixtures.basePath], t.io)).code).toBe(2);
    expect(t.err.join("")).toMatch(/--adapters are required/);
    const bad = join(dir.path, "bad.json");
    writeFileSync(bad, JSON.stringify({ contract: "x", version: "1", cases: [] }));
    const u = io();
    expect(
      (
        await runContractCommand(
          ["--model", fixtures.basePath, "--adapters", fixtures.adaptersDir, "--contract", bad],
          u.io,
        )
      ).code,
    ).toBe(2);
    expect(u.err.join("")).toMatch(/version: .*semantic version/);
  });
});
