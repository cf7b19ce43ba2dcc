import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "electron/**/*.test.ts",
      "native/**/*.test.ts",
      "common/**/*.test.ts",
      "renderer/**/*.test.{ts,tsx}",
      "cloud/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Engine tests start real node-llama-cpp processes; 2 cores do not take many at once.
    maxWorkers: 2,
    env: {
      // The engine keeps its threads on the last cores (native/engine/affinity.ts): right for the
      // app's one engine, but two test files starting engines at once would then queue on the
      // same core. Its own test turns it on; MACARON_ENGINE_AFFINITY=1 runs every test with it.
      MACARON_ENGINE_AFFINITY: process.env.MACARON_ENGINE_AFFINITY ?? "0",
    },
  },
});
