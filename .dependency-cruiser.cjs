// The arrows of ARCHITECTURE.md ("Folders and arrows"), checked by `npm run lint`
// (scripts/lint-arrows.mjs runs dependency-cruiser with this file). Every rule is an error.
// Paths are relative to the repository root; type-only imports count as arrows too.

/** Test files: they may import test support and test tools. */
const TEST_FILES = "\\.(test|spec)\\.(ts|tsx|mts|cts)$";
/** Folders that exist only for tests, benchmarks and end-to-end runs. */
const TEST_FOLDERS = "^(testing|bench|e2e)/";
/** Test support: the `testing/` home and any `testing/` folder left inside a product folder. */
const TEST_SUPPORT = "(^|/)testing/";
/** Scripts that only tests run (the test runner, e2e and bench helpers). */
const TEST_SCRIPTS = "^scripts/(test|e2e|bench)[^/]*$";
/** Everything that is not a test, test support, a benchmark, e2e or a test script. */
const NOT_PRODUCT = [TEST_FILES, TEST_FOLDERS, TEST_SUPPORT, TEST_SCRIPTS];

/** Our own folders (a dependency outside them is a package or Node builtin). */
const OURS = "^(common|electron|renderer|native|cloud|testing|bench|e2e|scripts|adapters)/";

/**
 * The trainer (cloud/training: `npm run train`, driven by the improvement cycle) trains adapters
 * FOR the app's harness: it lays examples out with the app's own prompt code and stamps the
 * app's harness version, so a trained adapter sees exactly the prompts it will get (a copy would
 * drift, which is what the harness version exists to catch). These are its only arrows into the
 * app, each from exactly this file to exactly these targets. The cloud service itself
 * (everything in cloud/ but the trainer) imports nothing of the app: see "cloud-service-apart".
 */
const TRAINER_USES_HARNESS = [
  {
    from: "^cloud/training/train\\.ts$",
    to: "^electron/core/harness\\.ts$",
    why: "the trainer stamps an adapter with the app's harness version (electron/core/harness.ts).",
  },
  {
    from: "^cloud/training/format-examples\\.ts$",
    to: "^electron/(core/chat/prompt|api/index)\\.ts$",
    why: "training examples are laid out by the app's own prompt code (electron/core/chat/prompt.ts).",
  },
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "A module must not import itself through others: pull the shared part out, or invert the arrow.",
      from: { pathNot: NOT_PRODUCT },
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import that resolves to no file (or a package missing from package.json).",
      from: {},
      to: { couldNotResolve: true },
    },

    // ---- layers -------------------------------------------------------------------------
    {
      name: "common-imports-only-common",
      severity: "error",
      comment: "common/ is what every side shares: it imports nothing of ours outside common/.",
      from: { path: "^common/", pathNot: TEST_FILES },
      to: { path: OURS, pathNot: "^common/" },
    },
    {
      name: "renderer-imports-only-renderer-api-common",
      severity: "error",
      comment:
        "The renderer is a sandboxed page: of our files it imports only renderer/, electron/api and common/.",
      from: { path: "^renderer/", pathNot: TEST_FILES },
      to: { path: OURS, pathNot: "^(renderer|electron/api|common)/" },
    },
    {
      name: "renderer-no-node",
      severity: "error",
      comment:
        "The renderer runs in a sandboxed page: no Node builtins (and no Electron, below). Use the API from electron/api.",
      from: { path: "^renderer/", pathNot: TEST_FILES },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "renderer-no-server-packages",
      severity: "error",
      comment: "Server-side packages do not belong in the renderer.",
      from: { path: "^renderer/", pathNot: TEST_FILES },
      to: { path: "(^|/)node_modules/(better-sqlite3|node-llama-cpp|fastify|@fastify/[^/]+|ws|openai)/" },
    },
    {
      name: "api-imports-only-api-common-zod",
      severity: "error",
      comment:
        "electron/api is the contract main and renderer share: it imports only itself, common/ and zod.",
      from: { path: "^electron/api/", pathNot: TEST_FILES },
      to: { pathNot: ["^(electron/api|common)/", "(^|/)node_modules/zod/"] },
    },
    {
      name: "preload-imports-only-api-common-electron",
      severity: "error",
      comment: "The preload bridges the page: it imports only itself, electron/api, common/ and electron.",
      from: { path: "^electron/preload/", pathNot: TEST_FILES },
      to: { pathNot: ["^(electron/preload|electron/api|common)/", "(^|/)node_modules/electron/"] },
    },
    {
      name: "core-not-to-main-server-renderer-cloud",
      severity: "error",
      comment:
        "electron/core is the app's logic under plain Node: the processes that host it, the page and the cloud service sit above it.",
      from: { path: "^electron/core/", pathNot: NOT_PRODUCT },
      to: { path: "^(electron/main|electron/server|renderer|cloud)/" },
    },
    {
      name: "native-not-to-electron-renderer-cloud",
      severity: "error",
      comment: "native/ (the engine process, GGUF files) knows nothing of the app or the cloud service.",
      from: { path: "^native/", pathNot: NOT_PRODUCT },
      to: { path: "^(electron|renderer|cloud)/" },
    },
    {
      name: "cloud-not-to-electron-renderer",
      severity: "error",
      comment: "The cloud service shares only common/ (and the engine, which the trainer runs) with the app.",
      from: {
        path: "^cloud/",
        pathNot: [...NOT_PRODUCT, ...TRAINER_USES_HARNESS.map((known) => known.from)],
      },
      to: { path: "^(electron|renderer)/" },
    },
    ...TRAINER_USES_HARNESS.map((known) => ({
      name: "cloud-not-to-electron-renderer",
      severity: "error",
      comment: `The trainer's only arrow into the app: ${known.why}`,
      from: { path: known.from },
      to: { path: "^(electron|renderer)/", pathNot: known.to },
    })),
    {
      name: "cloud-service-apart",
      severity: "error",
      comment:
        "The cloud service (ingest, export, prepare, registry, its server and CLI) shares only common/ with the app: not even the engine.",
      from: { path: "^cloud/", pathNot: [...NOT_PRODUCT, "^cloud/(training|trainer)/"] },
      to: { path: "^(electron|renderer|native)/" },
    },
    {
      name: "server-not-to-main",
      severity: "error",
      comment: "The headless server runs without Electron: it never imports electron/main.",
      from: { path: "^electron/server/", pathNot: NOT_PRODUCT },
      to: { path: "^electron/main/" },
    },
    {
      name: "electron-only-in-main-preload",
      severity: "error",
      comment:
        "Only electron/main and electron/preload run inside Electron; everything else runs under plain Node or in the page.",
      from: { path: "^(common|electron/(api|core|server)|native|cloud|renderer)/", pathNot: NOT_PRODUCT },
      to: { path: "(^|/)node_modules/electron/" },
    },

    // ---- test support only from tests ---------------------------------------------------
    {
      name: "test-support-only-from-tests",
      severity: "error",
      comment:
        "Test support (testing/, renderer/src/testing/, any */testing/) is imported only by tests, bench, e2e and test scripts.",
      from: { path: OURS, pathNot: NOT_PRODUCT },
      to: { path: TEST_SUPPORT },
    },
    {
      name: "no-test-tools-in-product",
      severity: "error",
      comment: "Product code never imports vitest, @playwright/test or fast-check.",
      from: { path: OURS, pathNot: NOT_PRODUCT },
      to: { path: "(^|/)node_modules/(vitest|@vitest|@playwright/test|fast-check)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(out|dist|release|coverage|test-results|playwright-report|fixtures-out)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
  },
};
