import { describe, expect, it } from "vitest";
import { ApiError } from "../../api";
import { encodeRouterArtifact, trainRoutingHead } from "../router/routing-head";
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

  it("judges a version whose router was made for another feature version: the app routes with the kernel classifier", async () => {
    const artifact = trainRoutingHead(
      [
        { label: "chat", text: "hello there", embedding: [1, 0] },
        { label: "coding", text: "write a function", embedding: [0, 1] },
      ],
      { baseSha256: "a".repeat(64), version: 1, steps: 5 },
    ).artifact;
    const future = encodeRouterArtifact({
      ...artifact,
      features: { ...artifact.features, version: 2 as unknown as 1 },
    });
    const logged: string[] = [];
    const deps = new Proxy({} as GateEvaluatorDeps, {
      get: (_t, key) => {
        if (key === "log") return (message: string) => logged.push(message);
        throw new Error("the gate ran on");
      },
    });
    const candidate = {
      adapterId: "coding",
      version: "1.1.0",
      manifest: { lineage: { parent: "1.0.0", trainedFrom: "x", details: { router: future } } },
    } as unknown as AdapterVersion;
    const error = await gateEvaluator(deps)(candidate, () => undefined, new AbortController().signal).then(
      () => null,
      (e: unknown) => e,
    );
    // Past the router check: the evaluation went on to the registry (the proxy's sentinel).
    expect((error as Error).message).toBe("the gate ran on");
    expect(logged).toEqual([
      expect.stringMatching(/carries a router this build cannot use: routing with the kernel classifier/),
    ]);
  });
});
