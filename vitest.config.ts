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
  },
});
