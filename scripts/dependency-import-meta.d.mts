/** Types of dependency-import-meta.mjs. */
import type { Plugin } from "vite";
export declare function rewriteImportMeta(code: string, id: string, outDir: string): string | null;
export declare function dependencyImportMeta(outDir: string): Plugin;
