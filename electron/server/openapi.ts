/** The OpenAPI 3.1 description of the app API, generated from the method map so it cannot drift. */
import { z } from "zod";
import { ApiErrorShape, methodNames, methods } from "../api";

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  // OpenAPI 3.1 uses JSON Schema 2020-12, zod's default target; the per-schema $schema is noise there.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

const errorEnvelope = {
  type: "object",
  properties: { ok: { const: false }, error: jsonSchema(ApiErrorShape, "output") },
  required: ["ok", "error"],
} satisfies JsonSchema;

function errorResponse(description: string) {
  return {
    description,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
  };
}

/** Builds the document served at /api/openapi.json. */
export function buildOpenApiDocument(version: string): JsonSchema {
  const paths: Record<string, unknown> = {};
  for (const name of methodNames) {
    const method = methods[name];
    paths[`/api/call/${name}`] = {
      post: {
        operationId: name,
        tags: [name.split(".")[0]],
        requestBody: {
          required: true,
          content: { "application/json": { schema: jsonSchema(method.input, "input") } },
        },
        responses: {
          "200": {
            description: "The method ran.",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { ok: { const: true }, value: jsonSchema(method.output, "output") },
                  required: ["ok", "value"],
                },
              },
            },
          },
          "400": errorResponse("invalid_input or unknown_method"),
          "401": errorResponse("unauthorized: missing or wrong key"),
          "403": errorResponse("forbidden: cross-origin request with the session cookie"),
          "404": errorResponse("not_found"),
          "409": errorResponse("busy"),
          "422": errorResponse("no_model, model_invalid or model_load_failed"),
          "500": errorResponse("internal"),
          "503": errorResponse("engine_crashed"),
          "507": errorResponse("disk_full: free disk space, then try again"),
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Macaron Desktop app API",
      version,
      description:
        "Every method is `POST /api/call/{method}` with a JSON body. Events stream over the WebSocket " +
        "`GET /api/events` as text frames `{event, payload}`. An OpenAI-compatible API lives under /v1.",
    },
    paths,
    components: {
      schemas: { ErrorEnvelope: errorEnvelope },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "macaron_session_<instance>",
          description:
            "Set by opening the printed sign-in URL (`/?code=…`, single use); its name is per instance.",
        },
      },
    },
    security: [{ bearer: [] }, { session: [] }],
  };
}
