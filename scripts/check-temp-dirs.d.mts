/** Types of check-temp-dirs.mjs (for its test). */
export declare function isTestFile(path: string): boolean;
export declare function hasOwnMarker(text: string): boolean;
export declare function ownTempDirs(text: string): { line: number; match: string }[];
