// Flat config (ESLint 9, typescript-eslint 8). Type-checked rules for TypeScript and React hooks
// rules for the renderer. The import arrows between folders (the process boundaries and layers
// of ARCHITECTURE.md: renderer → electron/api, no Node or Electron in the page, no electron
// outside main/preload, test support only from tests, no cycles) are checked by
// dependency-cruiser in the same `npm run lint` (.dependency-cruiser.cjs, scripts/lint-arrows.mjs).
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

const TS = ["**/*.{ts,tsx,mts,cts}"];

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
    // startServices builds the services in dependency order: a value read before its declaration
    // would work only while every read sits in a closure that runs later.
    files: ["electron/core/core-services.ts"],
    rules: {
      "@typescript-eslint/no-use-before-define": [
        "error",
        { functions: false, classes: false, variables: true, typedefs: false, ignoreTypeReferences: true },
      ],
    },
  },
  {
    files: ["renderer/**/*.{ts,tsx}"],
    extends: [reactHooks.configs.flat["recommended-latest"]],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
