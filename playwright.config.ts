import { defineConfig } from "@playwright/test";
import { CHROMIUM_LAUNCH } from "./e2e/chromium";

/**
 * Browser e2e against headless mode in Debian's Chromium (Playwright cannot download its own
 * browser here). Each test file starts its own server process with a fresh data dir.
 */
export default defineConfig({
  testDir: "e2e",
  // Its own folder: Playwright empties outputDir at start, and test-results/ also holds the
  // generated fixtures and the unit-test report.
  outputDir: "test-results/playwright",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  // One engine process per server; 2 cores do not run several side by side well.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  globalSetup: "./e2e/global-setup.ts",
  use: {
    browserName: "chromium",
    launchOptions: CHROMIUM_LAUNCH,
    trace: "retain-on-failure",
  },
});
