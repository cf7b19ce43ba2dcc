/** The app API over HTTP: one POST per method, events over a WebSocket, and its description. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { IMPORT_JSON_MAX_CHARS, isMethodName, type ErrorCode, type Result } from "../api";
import type { Core } from "../core/core-types";
import { httpStatusFor } from "./http-status";
import { buildOpenApiDocument } from "./openapi";

/** Largest JSON body a call may carry (chat.send text is at most 100k characters). */
export const API_BODY_LIMIT = 1024 * 1024;

/**
 * The body limit of conversations.import, the one call that carries a whole export file: big
 * enough for any `json` the method accepts. Inside the JSON body each character of the file
 * takes at most 3 bytes (non-ASCII as UTF-8; `"`, `\\` and the whitespace a valid file holds
 * as 2-byte escapes), plus the `{"json":…}` around it.
 */
export const IMPORT_BODY_LIMIT = IMPORT_JSON_MAX_CHARS * 3 + 1024;

/** The route with its own body limit: a static path wins over `/api/call/:method`. */
export const IMPORT_ROUTE = "/api/call/conversations.import";

/** Sends a failure envelope with the status that matches its code. */
export function sendApiError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  status = httpStatusFor(code),
) {
  const body: Result<never> = { ok: false, error: { code, message } };
  return reply.code(status).type("application/json").send(body);
}

export function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && /^application\/json\s*(;|$)/i.test(header);
}

export function registerApiRoutes(app: FastifyInstance, core: Core, version: string): void {
  // Made on the first request: converting every method's schema takes a start-up ~40 ms.
  let openApi: ReturnType<typeof buildOpenApiDocument> | null = null;
  app.get("/api/openapi.json", (_request, reply) => reply.send((openApi ??= buildOpenApiDocument(version))));

  const call = async (request: FastifyRequest, reply: FastifyReply, method: string) => {
    // Requiring JSON also shuts out HTML forms, which can only post "simple" content types.
    if (!isJsonContentType(request.headers["content-type"])) {
      return sendApiError(
        reply,
        "invalid_input",
        "Send the method input as JSON (content-type: application/json).",
        415,
      );
    }
    if (!isMethodName(method)) return sendApiError(reply, "unknown_method", `Unknown method: ${method}`);
    const result = await core.dispatch(method, request.body ?? {}, { transport: "http" });
    if (result.ok) return reply.code(200).send(result);
    return reply.code(httpStatusFor(result.error.code)).send(result);
  };

  app.post<{ Params: { method: string } }>(
    "/api/call/:method",
    { bodyLimit: API_BODY_LIMIT },
    (request, reply) => call(request, reply, request.params.method),
  );
  app.post(IMPORT_ROUTE, { bodyLimit: IMPORT_BODY_LIMIT }, (request, reply) =>
    call(request, reply, "conversations.import"),
  );

  app.get("/api/events", { websocket: true }, (socket) => {
    const dispose = core.subscribe((event, payload) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ event, payload }));
    });
    socket.on("close", dispose);
    // The channel is one-way; anything the client sends is ignored.
  });
}
