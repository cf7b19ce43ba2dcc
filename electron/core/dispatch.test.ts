import { describe, expect, it } from "vitest";
import { ApiError, methodNames } from "../api";
import { chatHandlers } from "./chat/chat-handlers";
import type { TurnPipeline } from "./chat/turn-pipeline";
import { dispatch } from "./dispatch";
import type { Handlers } from "./handlers";
import type { ModelService } from "./models/model-service";
import { modelHandlers } from "./models/model-handlers";

const ctx = { transport: "http" } as const;

/** A full handler map whose methods all fail loudly unless overridden. */
function handlers(overrides: Partial<Handlers>): Handlers {
  const base = Object.fromEntries(
    methodNames.map((m) => [
      m,
      () => {
        throw new Error(`${m} not expected in this test`);
      },
    ]),
  ) as unknown as Handlers;
  return { ...base, ...overrides };
}

const conversation = { id: "c1", title: "T", createdAt: 1, updatedAt: 2, adapters: "auto" as const };

describe("dispatch", () => {
  it("runs a handler with the parsed input and returns its validated output", async () => {
    const seen: unknown[] = [];
    const h = handlers({
      "conversations.rename": (input, c) => {
        seen.push(input, c);
        return { ...conversation, title: input.title };
      },
    });
    const result = await dispatch(h, "conversations.rename", { id: "c1", title: "New" }, ctx);
    expect(result).toEqual({ ok: true, value: { ...conversation, title: "New" } });
    expect(seen).toEqual([{ id: "c1", title: "New" }, ctx]);
  });

  it("answers unknown_method for names that are not methods (including prototype keys)", async () => {
    const h = handlers({});
    for (const name of ["nope", "toString", "__proto__", ""]) {
      const result = await dispatch(h, name, {}, ctx);
      expect(result).toMatchObject({ ok: false, error: { code: "unknown_method" } });
    }
  });

  it("answers invalid_input with a readable message naming the field", async () => {
    const h = handlers({});
    const missing = await dispatch(h, "chat.send", { conversationId: "c1" }, ctx);
    expect(missing).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    if (!missing.ok) expect(missing.error.message).toMatch(/^Invalid input for chat\.send: text: /);

    const extra = await dispatch(h, "models.status", { surprise: 1 }, ctx);
    expect(extra).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    if (!extra.ok) expect(extra.error.message).toMatch(/surprise/);

    const notObject = await dispatch(h, "conversations.list", "hello", ctx);
    expect(notObject).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    if (!notObject.ok) expect(notObject.error.message).toMatch(/input: /);

    const badSampling = await dispatch(
      h,
      "chat.send",
      { conversationId: "c", text: "x", sampling: { temperature: 9 } },
      ctx,
    );
    if (!badSampling.ok) expect(badSampling.error.message).toMatch(/sampling\.temperature/);
    else expect.fail("temperature 9 should be refused");
  });

  it("passes ApiErrors through and turns anything else into a logged internal error", async () => {
    const logged: string[] = [];
    const log = (message: string): void => void logged.push(message);
    const h = handlers({
      "conversations.get": () => {
        throw new ApiError("not_found", "No such conversation.");
      },
      "conversations.list": () => {
        throw new TypeError("cannot read properties of undefined");
      },
      "conversations.delete": () => Promise.reject(new Error("async failure")),
    });
    expect(await dispatch(h, "conversations.get", { id: "x" }, ctx, log)).toEqual({
      ok: false,
      error: { code: "not_found", message: "No such conversation." },
    });
    const internal = await dispatch(h, "conversations.list", {}, ctx, log);
    expect(internal).toEqual({
      ok: false,
      error: { code: "internal", message: "Internal error in conversations.list." },
    });
    expect(await dispatch(h, "conversations.delete", { id: "x" }, ctx, log)).toMatchObject({
      ok: false,
      error: { code: "internal" },
    });
    expect(logged).toEqual(["conversations.list failed", "conversations.delete failed"]);
  });

  it("reports output that breaks its schema as an internal error, never as data", async () => {
    const logged: string[] = [];
    const h = handlers({
      // A bug: the handler returns the wrong shape.
      "conversations.create": () => ({ id: "c1" }) as never,
    });
    const result = await dispatch(h, "conversations.create", {}, ctx, (m) => void logged.push(m));
    expect(result).toMatchObject({ ok: false, error: { code: "internal" } });
    expect(logged[0]).toMatch(/output of conversations.create does not match its schema/);
  });

  it("requires a handler for every method (type-level)", () => {
    const pipeline = {} as TurnPipeline;
    const models = {} as ModelService;
    // @ts-expect-error the conversations.* handlers are missing
    const incomplete: Handlers = { ...chatHandlers(pipeline), ...modelHandlers(models) };
    expect(Object.keys(incomplete)).not.toContain("conversations.list");
  });
});
