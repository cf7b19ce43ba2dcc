import { configDefaults, defineConfig } from "vitest/config";
import { SLOW_BY_NAME, SLOW_FILES } from "./testing/tiers/slow-tests";

const include = [
  "electron/**/*.test.ts",
  "native/**/*.test.ts",
  "common/**/*.test.ts",
  "renderer/**/*.test.{ts,tsx}",
  "cloud/**/*.test.ts",
  "scripts/**/*.test.ts",
];
const slow = [...SLOW_BY_NAME, ...SLOW_FILES];

/**
 * Two tiers (testing/tiers/slow-tests.ts): "fast" runs in-process only, under a guard that fails a
 * test starting a process or a worker; "slow" starts engines, servers, PostgreSQL, Python or a
 * browser. `vitest run` (npm test) runs both; `npm run test:fast` only the first.
 */
export default defineConfig({
  test: {
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
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include,
          exclude: [...configDefaults.exclude, ...slow],
          setupFiles: ["testing/tiers/process-guard.ts"],
        },
      },
      { extends: true, test: { name: "slow", include: slow } },
    ],
  },
});
