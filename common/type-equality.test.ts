/**
 * Type-level tests, checked by `npm run typecheck` (tsc compiles test files too): each
 * `@ts-expect-error` line must fail to compile, or tsc reports the directive as unused. The
 * runtime assertions only keep vitest's file count honest and pin what the types promise.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { EngineReplySchemas } from "./engine-message-schema";
import type { EngineReplies, EngineRequest, FitSource, GenerateOptions, ToolChoice } from "./engine-protocol";
import { parseEngineRequest, type EngineRequestSchema } from "./engine-request-schema";
import type { DeepEqual, Equal } from "./type-equality";

type Options = Extract<z.output<typeof EngineRequestSchema>, { type: "generate" }>["options"];
type Reply<K extends keyof EngineReplies> = z.output<(typeof EngineReplySchemas)[K]>;

/** Adds `extra?: number` to the object at `K` of T (optional, so each side stays assignable to the other). */
type WithExtra<T, K extends keyof T> = Omit<T, K> & { [P in K]?: NonNullable<T[P]> & { extra?: number } };

describe("DeepEqual", () => {
  it("holds for one shape written two ways, and fails for a nested optional field on one side", () => {
    interface Written {
      a: string;
      nested?: { b?: number; list: { c: boolean }[] };
    }
    type Composed = { a: string } & {
      readonly nested?: { b?: number | undefined } & { list: { c: boolean }[] };
    };
    const same: DeepEqual<Written, Composed> = true;

    // Assignable both ways, yet not the same: a top-level or mutual-assignability check passes these.
    // @ts-expect-error an optional field added in a nested object
    const nested: DeepEqual<
      Written,
      { a: string; nested?: { b?: number; list: { c: boolean }[]; d?: string } }
    > = true;
    // @ts-expect-error an optional field added in an array's elements
    const inArray: DeepEqual<Written, { a: string; nested?: { b?: number; list: { c: boolean; d?: 1 }[] } }> =
      true;
    // @ts-expect-error an optional field added in one member of a union
    const inUnion: DeepEqual<string | { name: string }, string | { name: string; d?: 1 }> = true;
    // @ts-expect-error a field optional on one side only
    const optionality: DeepEqual<{ a: number }, { a?: number }> = true;
    expect([same, nested, inArray, inUnion, optionality]).toEqual([true, true, true, true, true]);
  });
});

describe("the engine's request types", () => {
  it("are the request schema's output, so a field exists in both or in neither", () => {
    const request: Equal<EngineRequest, z.output<typeof EngineRequestSchema>> = true;
    const options: Equal<GenerateOptions, Options> = true;
    // A repeat-penalty field the schema does not have is not in the type either.
    const penalty: GenerateOptions = {
      temperature: 0,
      maxTokens: 1,
      // @ts-expect-error dryMultiplier is not a field of the schema, hence not of the type
      repeatPenalty: { penalty: 1.1, dryMultiplier: 0.8 },
    };
    const choice: ToolChoice = { name: "set_timer" };
    const source: FitSource = { url: "https://example.com/m.gguf", headers: { a: "b" } };
    expect([request, options]).toEqual([true, true]);
    // …and the strict schema refuses it on the wire, naming it.
    const parsed = parseEngineRequest({
      id: 1,
      type: "generate",
      history: [{ role: "user", text: "hi" }],
      options: penalty,
    });
    expect(parsed.ok ? "" : parsed.message).toMatch(
      /options\.repeatPenalty: Unrecognized key: "dryMultiplier"/,
    );
    expect([choice, source]).toBeTruthy();
  });
});

describe("the engine's reply types and their schemas", () => {
  it("agree at every depth: a field on one side only fails the check", () => {
    const generate: DeepEqual<Reply<"generate">, EngineReplies["generate"]> = true;
    const fit: DeepEqual<Reply<"fit">, EngineReplies["fit"]> = true;
    // @ts-expect-error a field added to FitModelFacts and not to the reply schema
    const fitModel: DeepEqual<Reply<"fit">, WithExtra<EngineReplies["fit"], "model">> = true;
    // @ts-expect-error a field added to the cut-off call and not to the reply schema
    const cutOff: DeepEqual<Reply<"generate">, WithExtra<EngineReplies["generate"], "cutOffCall">> = true;
    // @ts-expect-error a field added to the load settings and not to the reply schema
    const settings: DeepEqual<Reply<"load">, WithExtra<EngineReplies["load"], "settings">> = true;
    expect([generate, fit, fitModel, cutOff, settings]).toEqual([true, true, true, true, true]);
  });
});
