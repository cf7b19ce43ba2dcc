import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi";
import { registerOpenAiRoutes } from "./openai/routes";
import { FakeCore } from "../../testing/server/test-core";

interface Doc {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: Schema }> };
        responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
      }
    >
  >;
}
interface Schema {
  $ref?: string;
  required?: string[];
  additionalProperties?: unknown;
  properties?: Record<string, unknown>;
}

/** The /v1 routes as Fastify registers them (method + url), HEAD left out (Fastify adds it to GETs). */
async function registeredV1Routes(): Promise<string[]> {
  const app = Fastify();
  const routes: string[] = [];
  app.addHook("onRoute", (route) => {
    const verbs = Array.isArray(route.method) ? route.method : [route.method];
    // Fastify's `:id` is OpenAPI's `{id}`.
    const url = route.url.replace(/:(\w+)/g, "{$1}");
    for (const verb of verbs) if (verb !== "HEAD") routes.push(`${verb.toLowerCase()} ${url}`);
  });
  registerOpenAiRoutes(app, new FakeCore());
  await app.ready();
  await app.close();
  return routes.filter((r) => r.split(" ")[1]!.startsWith("/v1/")).sort();
}

describe("OpenAPI document, /v1", () => {
  const doc = buildOpenApiDocument("1.2.3") as unknown as Doc;

  it("documents every route registered under /v1, and no other", async () => {
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([path, ops]) => Object.keys(ops).map((verb) => `${verb} ${path}`))
      .sort();
    const registered = await registeredV1Routes();
    expect(registered.length).toBeGreaterThanOrEqual(6);
    expect(documented).toEqual(registered);
  });

  it("takes request bodies from the zod schemas: strict, with their required fields", () => {
    const chat = doc.paths["/v1/chat/completions"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(chat.required).toEqual(expect.arrayContaining(["model", "messages"]));
    expect(chat.additionalProperties).toBe(false);
    expect(chat.properties).toHaveProperty("response_format");
    expect(chat.properties).toHaveProperty("top_k");
    const embeddings = doc.paths["/v1/embeddings"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(embeddings.required).toEqual(expect.arrayContaining(["model", "input"]));
    const messages = doc.paths["/v1/messages"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(messages.required).toEqual(expect.arrayContaining(["model", "max_tokens", "messages"]));
    const responses = doc.paths["/v1/responses"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(responses.properties).toHaveProperty("input");
  });

  it("describes OpenAI's answers: chat, completions and embeddings with usage", () => {
    const answer = (path: string) =>
      doc.paths[path]!.post!.responses["200"]!.content!["application/json"]!.schema;
    for (const path of ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"]) {
      expect(answer(path).required, path).toContain("usage");
    }
    expect(Object.keys(doc.paths["/v1/chat/completions"]!.post!.responses["200"]!.content!)).toEqual([
      "application/json",
      "text/event-stream",
    ]);
  });

  it("gives errors in OpenAI's shape, Anthropic's for /v1/messages", () => {
    const ref = (path: string, verb: string) =>
      doc.paths[path]![verb]!.responses["400"]!.content!["application/json"]!.schema.$ref;
    expect(ref("/v1/chat/completions", "post")).toBe("#/components/schemas/OpenAiError");
    expect(ref("/v1/embeddings", "post")).toBe("#/components/schemas/OpenAiError");
    expect(ref("/v1/models", "get")).toBe("#/components/schemas/OpenAiError");
    expect(ref("/v1/messages", "post")).toBe("#/components/schemas/AnthropicError");
  });
});

describe("OpenAPI document, references", () => {
  /** Every `$ref` in `value`, with where it is. */
  function refs(value: unknown, at = "#"): { at: string; ref: string }[] {
    if (Array.isArray(value)) return value.flatMap((v, i) => refs(v, `${at}/${i}`));
    if (value === null || typeof value !== "object") return [];
    return Object.entries(value).flatMap(([k, v]) =>
      k === "$ref" && typeof v === "string" ? [{ at, ref: v }] : refs(v, `${at}/${k}`),
    );
  }

  /** The value a local JSON pointer (`#/a/b`) names in `doc`, or undefined. */
  function resolve(doc: unknown, ref: string): unknown {
    return ref
      .slice(2)
      .split("/")
      .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
  }

  it("resolves every $ref from the document's root, the recursive schemas' too", () => {
    const doc = buildOpenApiDocument("1.2.3");
    const all = refs(doc);
    expect(all.filter(({ ref }) => !ref.startsWith("#/") || resolve(doc, ref) === undefined)).toEqual([]);
    // The messages of a conversation nest (a tree of versions): their schema refers to itself.
    const conversation = JSON.stringify(
      (doc as { paths: Record<string, unknown> }).paths["/api/call/conversations.get"],
    );
    expect(conversation).toContain("#/components/schemas/conversations.get.");
    expect(JSON.stringify(doc)).not.toContain("$defs");
  });
});
