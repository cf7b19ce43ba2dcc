/** Types of check-messages-sql.mjs (for its test). */
export declare const REPOSITORY: string;
export declare const ALLOWED: ReadonlyMap<string, string>;
export declare function messagesSql(text: string): { line: number; match: string }[];
export declare function mayUseMessagesSql(path: string): boolean;
export declare function stringLiterals(src: string): { start: number; text: string }[];
