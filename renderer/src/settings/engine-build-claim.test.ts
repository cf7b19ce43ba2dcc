/// <reference types="vite/client" />
/**
 * Settings' sentence about building llama.cpp for this machine says what bench/README.md
 * measured (issue 30: it claimed "about twice as fast" where the README found it no faster).
 */
import { describe, expect, it } from "vitest";
import { BUILD_SPEED_CLAIM } from "./EngineBuildSettings";

// Read through Vite (the renderer's types have no node:fs).
const readme =
  Object.values(
    import.meta.glob("../../../bench/README.md", { query: "?raw", import: "default", eager: true }),
  )[0] ?? "";

describe("the native build's speed claim", () => {
  it("matches bench/README.md", () => {
    expect(BUILD_SPEED_CLAIM).not.toMatch(/twice/i);
    // One thread: prebuilt / built prompt speed close to 1 ("no faster").
    const oneThread = Number(/\| prebuilt \/ built\s*\| ([\d.]+)×/.exec(readme)?.[1]);
    expect(oneThread).toBeGreaterThan(0.9);
    expect(BUILD_SPEED_CLAIM).toContain("no faster than the prebuilt binaries with one thread");
    // Two threads, 2k-token prompt: both measured against llama-server; their ratio is the claim.
    const two = /local ([\d.]+)× llama-server's TTFT against the prebuilt's ([\d.]+)×/.exec(
      readme.replace(/\s+/g, " "),
    );
    expect(two).not.toBeNull();
    const ratio = Number(two![1]) / Number(two![2]);
    expect(BUILD_SPEED_CLAIM).toContain(`about ${ratio.toFixed(1)}× faster on a long prompt with two`);
  });
});
