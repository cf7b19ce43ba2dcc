// Flat config (ESLint 9, typescript-eslint 8). Type-checked rules for TypeScript, React hooks
// rules for the renderer, and import zones that enforce the process boundaries of DESIGN.md:
//   electron/api                     imports only zod (nothing else of ours)
//   renderer                         imports only electron/api among project files; no electron, no Node
//   electron/core, server, native    never import electron
//   electron/preload                 imports only electron and electron/api
// Zones apply to shipped code; *.test.ts files may import test tools and fixtures.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

const TS = ["**/*.{ts,tsx,mts,cts}"];
const TESTS = ["**/*.test.{ts,tsx}", "**/*.spec.{ts,tsx}"];
const nodeBuiltins = builtinModules.filter((m) => !m.startsWith("_")).join("|");

/** One `no-restricted-imports` rule for a zone (a later config object would replace, not merge, it). */
function zone(files, patterns, paths = []) {
  return {
    files,
    ignores: TESTS,
    rules: { "no-restricted-imports": ["error", { paths, patterns }] },
  };
}

export default defineConfig(
  {
    ignores: [
      "out/**",
      "release/**",
      "dist/**",
      "node_modules/**",
      "coverage/**",
      "test-results/**",
      "playwright-report/**",
      ".vite/**",
      "fixtures-out/**",
    ],
  },
  js.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: TS,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": [
        "error",
        { prefer: "type-imports", fixStyle: "inline-type-imports" },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["renderer/**/*.{ts,tsx}"],
    extends: [reactHooks.configs.flat["recommended-latest"]],
    languageOptions: { globals: { ...globals.browser } },
  },

  zone(
    ["electron/api/**/*.ts"],
    [
      {
        regex: "^(?!zod(/|$)|\\./)",
        message: "electron/api is the shared contract: it may import only zod and its own files.",
      },
    ],
  ),
  zone(
    ["renderer/**/*.{ts,tsx}"],
    [
      {
        regex: `^(electron|node:.*|${nodeBuiltins})(/.*)?$`,
        message:
          "The renderer runs in a sandboxed page: no Electron, no Node. Use the API from electron/api.",
      },
      {
        regex: "^(\\.\\./)+(electron(?!/api(/|$))|native|cloud|scripts|bench)(/|$)",
        message: "The renderer may import only electron/api among project files.",
      },
      {
        regex: "^(better-sqlite3|node-llama-cpp|fastify|@fastify/.*|ws|openai)$",
        message: "Server-side packages do not belong in the renderer.",
      },
    ],
  ),
  zone(
    ["electron/core/**/*.ts", "electron/server/**/*.ts", "native/**/*.ts"],
    [
      {
        regex: "^electron(/.*)?$",
        message: "core, server and native run under plain Node: never import electron.",
      },
    ],
  ),
  zone(
    ["electron/preload/**/*.ts"],
    [
      {
        regex: "^(?!electron$|\\.\\./api(/|$)|\\./)",
        message: "The preload may import only electron and electron/api.",
      },
    ],
  ),

  {
    files: ["**/*.{js,mjs,cjs}"],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
