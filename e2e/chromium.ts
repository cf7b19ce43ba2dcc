/**
 * How the tests and benchmarks launch Debian's Chromium (Playwright cannot download its own
 * browser here). `--no-sandbox`: the browser runs as root in CI containers, where Chromium's
 * sandbox cannot start; it is the test browser's sandbox, not the app's (Electron keeps
 * `sandbox: true`). The other flags keep it from reaching the network on its own.
 */
export const CHROMIUM_LAUNCH = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
  ],
};
