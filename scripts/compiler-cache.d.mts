/** Types of compiler-cache.mjs. */
export declare function withCompilerCache(env: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv;
