export * from "./schemas";
export * from "./releases";
export * from "./errors";
export * from "./methods";
export * from "./events";
export * from "./client";
