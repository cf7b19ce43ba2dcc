/**
 * A browser's CORS preflight as the OpenAI and Anthropic SDKs cause it from a web page: OPTIONS
 * with the page's Origin, the method and the headers it wants to send, and no key (browsers
 * send none). Shared by the tests of the headless server's `--cors` and of the desktop app's
 * "Local API server" allow-list.
 *
 * Each preflight opens its own connection (node:http without an agent), as fetch's pool may
 * hand out a kept-alive socket of a server that has just restarted with a new list.
 */
import { request } from "node:http";

export function corsPreflight(
  baseUrl: string,
  origin: string,
  path = "/v1/chat/completions",
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, {
      method: "OPTIONS",
      agent: false,
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      res.on("error", reject);
      res.resume();
      res.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
        resolve(new Response(null, { status: res.statusCode ?? 0, headers }));
      });
    });
    req.end();
  });
}
