/** Types of cpu-id.mjs. */
export declare function cpuId(): string;
