import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig } from "electron-vite";
import { dependencyImportMeta } from "./scripts/dependency-import-meta.mjs";

// One build for the three Electron bundles. The headless server (out/main/cli.js, plain Node)
// runs the same core code and serves out/renderer, so the renderer build is shared by both modes.
export default defineConfig({
  main: {
    plugins: [dependencyImportMeta(resolve(__dirname, "out/main"))],
    build: {
      // These dependencies are bundled, not loaded from node_modules file by file: Node's module
      // loader took most of the start (node-llama-cpp's ~300 modules: 0.45 s for the engine, 0.12 s
      // as one file; zod, the MCP SDK and fastify ~0.1 s more for the server). A bundled file
      // still finds its own folder (dependencyImportMeta); native code stays outside (below).
      externalizeDeps: {
        exclude: [
          "node-llama-cpp",
          "zod",
          "lifecycle-utils",
          "@modelcontextprotocol/sdk",
          "ajv",
          "fastify",
          "@fastify/static",
          "@fastify/websocket",
          "@fastify/cookie",
        ],
      },
      outDir: "out/main",
      rollupOptions: {
        input: {
          index: resolve(__dirname, "electron/main/index.ts"),
          engine: resolve(__dirname, "native/engine/main.ts"),
          // The contract's code sandbox (electron/core/contract/sandbox/sandbox.ts forks it).
          sandbox: resolve(__dirname, "electron/core/contract/sandbox/child.ts"),
          // `npm start` headless / `npm run serve`: no tsx at run time.
          cli: resolve(__dirname, "electron/server/cli.ts"),
        },
        // pyodide loads its WebAssembly and standard library from its own folder in node_modules.
        // node-llama-cpp's binaries (@node-llama-cpp/<platform>, *.node) are loaded from their files.
        external: ["better-sqlite3", "pyodide", /^@node-llama-cpp\//, /^@reflink\//, /\.node$/],
        // Shared chunks next to the entries, not in chunks/: paths relative to import.meta
        // (out/renderer, resources/demo, engine.js beside spawn-node) assume two levels deep.
        output: { chunkFileNames: "[name]-[hash].js" },
      },
    },
  },
  preload: {
    build: {
      outDir: "out/preload",
      // A sandboxed preload cannot be an ES module and can require() only "electron" (and a few
      // Node shims): emit CommonJS as out/preload/index.js (electron-vite would otherwise follow
      // package.json "type":"module" and write index.mjs) and bundle zod instead of requiring it.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(__dirname, "electron/preload/index.ts") },
        output: { format: "cjs", entryFileNames: "[name].js", chunkFileNames: "chunks/[name]-[hash].js" },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, "renderer"),
    plugins: [react()],
    build: {
      outDir: resolve(__dirname, "out/renderer"),
      rollupOptions: { input: { index: resolve(__dirname, "renderer/index.html") } },
      // Fonts (KaTeX's) stay files: a small one inlined as a data: URL is refused by the CSP's
      // font-src 'self'. Other assets keep Vite's default inlining.
      assetsInlineLimit: (file: string) => (/\.(woff2?|ttf|otf)$/.test(file) ? false : undefined),
    },
  },
});
