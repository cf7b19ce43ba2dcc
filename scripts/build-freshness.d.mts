/** Types of build-freshness.mjs (for the TypeScript benchmarks that import it). */
export declare const HEADLESS_BUILD: readonly string[];
export declare function isStale(outputs: readonly string[]): boolean;
export declare function build(): number | null;
