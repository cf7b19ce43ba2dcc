import type { z } from "zod";
import type { MethodName, MethodOutput, Methods } from "../api";
import type { CallContext } from "./core-types";

/** A method's implementation: gets the parsed (validated) input, returns the output. */
export type Handler<M extends MethodName> = (
  input: z.output<Methods[M]["input"]>,
  ctx: CallContext,
) => Promise<MethodOutput<M>> | MethodOutput<M>;

/** Every method of electron/api/methods.ts must have a handler: a missing one fails to compile. */
export type Handlers = { [M in MethodName]: Handler<M> };

/** The handlers of the methods whose names start with `prefix` (one domain). */
export type DomainHandlers<Prefix extends string> = {
  [M in MethodName as M extends `${Prefix}.${string}` ? M : never]: Handler<M>;
};
