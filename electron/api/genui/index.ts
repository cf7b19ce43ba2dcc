/** GenUI: the component catalog, its validation, streaming parser and interactions. */
export * from "./catalog";
export * from "./limits";
export * from "./validate";
export * from "./partial";
export * from "./interaction";
export * from "./text";
export * from "./json-schema";
