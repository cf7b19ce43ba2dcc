/**
 * One error shape, the same Host check and the same security headers for every response,
 * including the errors Fastify raises itself (issue 15, item 6): a bad escape and an over-long
 * path segment (raised by the router before any hook), bad bodies, unknown routes, and what
 * Node's HTTP parser refuses before there is a request.
 */
import { connect } from "node:net";
import { request, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCore, listenForTest } from "../../testing/server/test-core";

let server: Awaited<ReturnType<typeof listenForTest>>;
let host: string;

beforeAll(async () => {
  server = await listenForTest(new FakeCore());
  host = new URL(server.url).host;
});
afterAll(async () => {
  await server.close();
});

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** node:http, not fetch: fetch cannot set Host and normalizes the path. */
function raw(
  path: string,
  options: { method?: string; host: string; headers?: Record<string, string>; body?: string },
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const u = new URL(server.url);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: options.method ?? "GET",
        headers: { ...options.headers, host: options.host },
      },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const SECURITY_HEADERS = [
  "content-security-policy",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
] as const;

function securityHeadersOf(reply: RawReply): Record<string, unknown> {
  return Object.fromEntries(SECURITY_HEADERS.map((name) => [name, reply.headers[name]]));
}

const auth = () => ({ authorization: `Bearer ${server.apiKey}` });
const json = () => ({ ...auth(), "content-type": "application/json" });

interface Case {
  name: string;
  path: string;
  method?: string;
  headers: () => Record<string, string>;
  body?: string;
  status: number;
}

const cases: Case[] = [
  {
    name: "a method name over maxParamLength",
    path: `/api/call/${"m".repeat(300)}`,
    method: "POST",
    headers: json,
    body: "{}",
    status: 414,
  },
  { name: "a bad escape in an API path", path: "/api/%E0%A4%A", headers: auth, status: 400 },
  {
    name: "a bad escape in the method name",
    path: "/api/call/%E0%A4%A",
    method: "POST",
    headers: json,
    body: "{}",
    status: 400,
  },
  {
    name: "a body that is not JSON",
    path: "/api/call/models.status",
    method: "POST",
    headers: () => ({ ...auth(), "content-type": "text/plain" }),
    body: "hi",
    status: 415,
  },
  {
    name: "a JSON body that does not parse",
    path: "/api/call/models.status",
    method: "POST",
    headers: json,
    body: "{nope",
    status: 400,
  },
  { name: "an unknown route", path: "/api/nothing-here", headers: auth, status: 404 },
  {
    name: "an unknown HTTP method on a route",
    path: "/api/call/models.status",
    method: "PUT",
    headers: json,
    body: "{}",
    status: 404,
  },
];

describe("errors Fastify raises itself", () => {
  let normal: RawReply;
  beforeAll(async () => {
    normal = await raw("/api/call/models.status", { method: "POST", host, headers: json(), body: "{}" });
    expect(normal.status).toBe(200);
    for (const name of SECURITY_HEADERS) expect(normal.headers[name]).toBeTruthy();
  });

  for (const c of cases) {
    it(`${c.name}: a foreign Host gets the Host refusal`, async () => {
      const res = await raw(c.path, {
        method: c.method,
        host: "evil.example",
        headers: c.headers(),
        body: c.body,
      });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body)).toEqual({
        ok: false,
        error: { code: "forbidden", message: "Unknown Host header." },
      });
      expect(securityHeadersOf(res)).toEqual({
        ...securityHeadersOf(normal),
        "content-security-policy": expect.stringContaining("connect-src 'self' ws://evil.example") as unknown,
      });
    });

    it(`${c.name}: our Host gets ${c.status} in the app's shape with the same headers`, async () => {
      const res = await raw(c.path, { method: c.method, host, headers: c.headers(), body: c.body });
      expect(res.status).toBe(c.status);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      const body = JSON.parse(res.body) as { ok: boolean; error: { code: string; message: string } };
      expect(Object.keys(body).sort()).toEqual(["error", "ok"]);
      expect(body.ok).toBe(false);
      expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
      expect(body.error.code).toBe(c.status === 404 ? "not_found" : "invalid_input");
      expect(body.error.message).not.toMatch(/FST_|%E0/);
      expect(securityHeadersOf(res)).toEqual(securityHeadersOf(normal));
    });
  }

  it("a bad escape under /v1 answers in OpenAI's shape, with the Host check and headers", async () => {
    const evil = await raw("/v1/%E0%A4%A", { host: "evil.example", headers: auth() });
    expect(evil.status).toBe(403);
    const res = await raw("/v1/%E0%A4%A", { host, headers: auth() });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: {
        message: "The URL is not valid (a bad percent-escape).",
        type: "invalid_request_error",
        param: null,
        code: "invalid_request",
      },
    });
    expect(securityHeadersOf(res)).toEqual(securityHeadersOf(normal));
  });

  it("a bad escape in a page path: the Host check and the headers too", async () => {
    const evil = await raw("/%E0%A4%A", { host: "evil.example" });
    expect(evil.status).toBe(403);
    expect(evil.body).toBe("Unknown Host header.");
    const res = await raw("/%E0%A4%A", { host });
    expect(res.status).toBe(400);
    expect(securityHeadersOf(res)).toEqual(securityHeadersOf(normal));
  });

  it("a request Node's parser refuses gets the app's shape and the security headers", async () => {
    const u = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(u.port), u.hostname, () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    const [head = "", body = ""] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head).toContain("x-content-type-options: nosniff");
    expect(head).toContain("x-frame-options: DENY");
    expect(head).toContain("content-security-policy: default-src 'self'");
    expect(JSON.parse(body)).toEqual({
      ok: false,
      error: { code: "invalid_input", message: "The request is not valid HTTP." },
    });
  });
});
