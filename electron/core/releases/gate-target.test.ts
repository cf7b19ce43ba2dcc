import { describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { gateEvaluator, type GateEvaluatorDeps } from "./gate-target";
import type { AdapterVersion } from "./release-store";

describe("the app's gate and a version's router artifact (issue 29)", () => {
  it("refuses to evaluate a version whose router artifact is corrupt, before anything runs: the live router stays", async () => {
    let touched = false;
    const deps = new Proxy({} as GateEvaluatorDeps, {
      get: () => {
        touched = true;
        throw new Error("the gate must not run");
      },
    });
    const candidate = {
      adapterId: "coding",
      version: "1.1.0",
      manifest: {
        lineage: { parent: "1.0.0", trainedFrom: "x", details: { router: { gz: "bm90IGd6aXA=" } } },
      },
    } as unknown as AdapterVersion;
    const error = await gateEvaluator(deps)(candidate, () => undefined, new AbortController().signal).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("invalid_input");
    expect((error as ApiError).message).toMatch(
      /^Version 1\.1\.0 of "coding" carries an unusable router: the router artifact cannot be read/,
    );
    expect(touched).toBe(false);
  });
});
