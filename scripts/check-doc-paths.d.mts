/** Types of check-doc-paths.mjs (for its test). */
export interface Repo {
  exists(path: string): boolean;
  ignored(path: string): boolean;
  trackedNames: ReadonlySet<string>;
  rootFiles: readonly string[];
}
export declare function stalePaths(doc: string, text: string, repo: Repo): { line: number; path: string }[];
export declare function gitRepo(): Repo;
