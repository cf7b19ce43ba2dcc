export * from "./schemas";
export * from "./releases";
export * from "./hub";
export * from "./tools";
export * from "./errors";
export * from "./methods";
export * from "./events";
export * from "./client";
