/**
 * HubClient against a hostile hub on loopback: answers that are not JSON, redirects to
 * `file://` and in a loop, listings with `../` paths, a 60 MB search answer and a 200,000-file
 * tree (bounded, with a clear error, instead of minutes of parsing), and tree paging or a
 * redirect that points at another host (the token stays with the hub), and a byte range answered
 * from the wrong offset, too short, or with the whole file (only what was asked is read). Each is an `upstream`
 * error (HTTP 502) with a sentence, not 500 "internal".
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { httpStatusFor } from "../../server/http-status";
import {
  HubClient,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
  MAX_TREE_ENTRIES,
  mayAuthorize,
  readRange,
} from "./hf-client";

type Handler = (req: IncomingMessage, res: ServerResponse, base: string) => void;

interface Hostile {
  url: string;
  /** Authorization header of every request, by path. */
  auth: { path: string; authorization: string | undefined }[];
}

/** A server answering each path with its handler (404 otherwise). */
async function hostile(routes: Record<string, Handler>): Promise<Hostile> {
  const auth: Hostile["auth"] = [];
  let base = "";
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    auth.push({ path, authorization: req.headers.authorization });
    const handler = routes[path];
    if (handler) handler(req, res, base);
    else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"Not found"}');
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: base, auth };
}

const json =
  (body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };

const INFO = json({ id: "evil/repo", tags: ["gguf"] });

function client(url: string, token: string | null = "hf_secret") {
  return new HubClient({ endpoint: url, token: () => Promise.resolve(token) });
}

describe("a hostile hub", () => {
  it("an answer that is not JSON, or not a list, is an upstream error (502), not internal", async () => {
    const h = await hostile({
      "/api/models": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html>maintenance</html>");
      },
      "/api/models/evil/repo": json([1, 2, 3]),
    });
    await expect(client(h.url).search("x")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/answered the model search with something that is not JSON/) as unknown,
    });
    await expect(client(h.url).repo("evil/repo")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/answer about evil\/repo was not an object/) as unknown,
    });
    expect(httpStatusFor("upstream")).toBe(502);
  });

  it("refuses an answer nested deeper than MAX_JSON_DEPTH before parsing it (3 s in JSON.parse at 6 MB)", async () => {
    const deep = "[".repeat(3_000_000) + "]".repeat(3_000_000);
    const h = await hostile({
      "/api/models": (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(deep);
      },
    });
    await expect(client(h.url).search("x")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(new RegExp(`nested more than ${MAX_JSON_DEPTH} levels deep`)) as unknown,
    });
    // An ordinary nested answer still reads.
    const fine = await hostile({
      "/api/models": json([{ id: "evil/repo", tags: ["gguf"], cardData: { a: { b: { c: [[["fine"]]] } } } }]),
    });
    expect((await client(fine.url).search("x")).map((m) => m.repo)).toEqual(["evil/repo"]);
  });

  it("does not follow a redirect to file:// or a redirect loop", async () => {
    const h = await hostile({
      "/api/models": (_req, res) => {
        res.writeHead(302, { location: "file:///etc/passwd" });
        res.end();
      },
      "/api/models/evil/repo": (_req, res) => {
        res.writeHead(301, { location: "/api/models/evil/repo" });
        res.end();
      },
    });
    await expect(client(h.url).search("x")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/to a file: address; only http and https are followed/) as unknown,
    });
    await expect(client(h.url).repo("evil/repo")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(
        /redirected the request for evil\/repo more than 10 times \(a redirect loop\)/,
      ) as unknown,
    });
    expect(h.auth.filter((a) => a.path === "/api/models/evil/repo")).toHaveLength(11);
  });

  it("leaves files with ../ or absolute paths out of a listing", async () => {
    const lfs = { oid: "a".repeat(64), size: 10 };
    const h = await hostile({
      "/api/models/evil/repo": INFO,
      "/api/models/evil/repo/tree/main": json([
        { type: "file", path: "../../escape-Q4_K_M.gguf", size: 10, lfs },
        { type: "file", path: "/etc/abs-Q4_K_M.gguf", size: 10, lfs },
        { type: "file", path: "dir/../../x-Q4_K_M.gguf", size: 10, lfs },
        { type: "file", path: "a\\..\\b-Q4_K_M.gguf", size: 10, lfs },
        { type: "file", path: "fine-Q4_K_M.gguf", size: 10, lfs },
      ]),
      "/v2/evil/repo/manifests/latest": json({ ggufFile: { rfilename: "../../escape-Q4_K_M.gguf" } }),
    });
    const repo = await client(h.url).repo("evil/repo");
    expect(repo.files.map((f) => f.path)).toEqual(["fine-Q4_K_M.gguf"]);
    await expect(client(h.url).manifestFile("evil/repo")).rejects.toMatchObject({ code: "not_found" });
  });

  it("refuses a search answer larger than the cap without reading it all (a 60 MB answer)", async () => {
    let sent = 0;
    const item = JSON.stringify({ id: "evil/m", tags: ["gguf"], cardData: { pad: "x".repeat(4000) } });
    const h = await hostile({
      // Chunked, no length: the cap has to hold while reading.
      "/api/models": (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write("[");
        const pump = () => {
          while (sent < 60_000_000) {
            sent += item.length + 1;
            if (!res.write(`${item},`)) return void res.once("drain", pump);
          }
          res.end(`${item}]`);
        };
        res.on("close", () => (sent = Infinity));
        pump();
      },
    });
    await expect(client(h.url).search("x")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/answer for the model search is larger than 8 MB/) as unknown,
    });
    expect(sent).not.toBe(60_000_000 + item.length + 1);
    // An answer that says its length up front is refused before reading.
    const announced = await hostile({
      "/api/models": (_req, res) => {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": String(MAX_JSON_BYTES + 1),
        });
        res.write("[");
      },
    });
    await expect(client(announced.url).search("x")).rejects.toThrow(/larger than 8 MB/);
  });

  it("reads a byte range of a file and no more: a 206 from another offset is refused; a hub that ignores Range is cut off", async () => {
    const file = "/evil/repo/resolve/main/adapter_model.safetensors";
    let sent = 0;
    let closed = false;
    const h = await hostile({
      // Ignores Range: the whole (50 MB) file from byte 0, chunked; chunk n is filled with n.
      [file]: (_req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const pump = () => {
          while (sent < 50_000_000 && !closed) {
            sent += 65_536;
            if (!res.write(Buffer.alloc(65_536, sent / 65_536))) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("close", () => (closed = true));
        pump();
      },
    });
    const bytes = await readRange(client(h.url), "evil/repo", "adapter_model.safetensors", 65_536 + 8, 16);
    expect([...bytes]).toEqual(Array(16).fill(2));
    expect(sent).toBeLessThan(50_000_000);
    const shifted = await hostile({
      [file]: (_req, res) => {
        res.writeHead(206, { "content-range": "bytes 0-15/100", "content-length": "16" });
        res.end(Buffer.alloc(16));
      },
    });
    await expect(
      readRange(client(shifted.url), "evil/repo", "adapter_model.safetensors", 8, 16),
    ).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/from byte 8 with other bytes \(bytes 0-15\/100\)/) as unknown,
    });
    const short = await hostile({
      [file]: (_req, res) => {
        res.writeHead(206, { "content-range": "bytes 8-23/100", "content-length": "4" });
        res.end(Buffer.alloc(4));
      },
    });
    await expect(
      readRange(client(short.url), "evil/repo", "adapter_model.safetensors", 8, 16),
    ).rejects.toThrow(/sent 4 of the 16 bytes asked for of adapter_model\.safetensors in evil\/repo/);
  });

  it("refuses a 200,000-file tree (paged) with a clear error", async () => {
    const page = (n: number) =>
      Array.from({ length: 1000 }, (_, i) => ({ type: "file", path: `d${n}/f${i}.txt`, size: 1 }));
    let pages = 0;
    const h = await hostile({
      "/api/models/evil/repo": INFO,
      "/api/models/evil/repo/tree/main": (req, res, base) => {
        const n = Number(new URL(req.url!, base).searchParams.get("cursor") ?? 0);
        pages++;
        json(
          page(n),
          n < 199 ? { link: `<${base}/api/models/evil/repo/tree/main?cursor=${n + 1}>; rel="next"` } : {},
        )(req, res, base);
      },
    });
    await expect(client(h.url).repo("evil/repo")).rejects.toMatchObject({
      code: "upstream",
      message: expect.stringMatching(/evil\/repo lists more than 100,000 files/) as unknown,
    });
    expect(pages).toBe(MAX_TREE_ENTRIES / 1000 + 1);
  });

  it("never sends the token to another host: tree paging there, or a redirect there", async () => {
    const other = await hostile({
      "/tree2": json([{ type: "file", path: "b-Q8_0.gguf", size: 5, lfs: { oid: "b".repeat(64), size: 5 } }]),
      "/info": INFO,
    });
    // The repo's info redirects to the other host; its tree's next page is there.
    const realTree = json(
      [{ type: "file", path: "a-Q8_0.gguf", size: 5, lfs: { oid: "a".repeat(64), size: 5 } }],
      { link: `<${other.url}/tree2>; rel="next"` },
    );
    const hub = await hostile({
      "/api/models/evil/repo": (_req, res) => {
        res.writeHead(302, { location: `${other.url}/info` });
        res.end();
      },
      "/api/models/evil/repo/tree/main": realTree,
    });
    const repo = await client(hub.url).repo("evil/repo");
    expect(repo.files.map((f) => f.path).sort()).toEqual(["a-Q8_0.gguf", "b-Q8_0.gguf"]);
    expect(hub.auth.map((a) => a.authorization)).toEqual(["Bearer hf_secret", "Bearer hf_secret"]);
    expect(other.auth.map((a) => a.path).sort()).toEqual(["/info", "/tree2"]);
    expect(other.auth.map((a) => a.authorization)).toEqual([undefined, undefined]);
  });

  it("allows the token on the hub's own host and, for the public hub, its documented CDN hosts over https", () => {
    expect(mayAuthorize("http://127.0.0.1:8080", "http://127.0.0.1:8080/a/b/resolve/main/x.gguf")).toBe(true);
    expect(mayAuthorize("http://127.0.0.1:8080", "http://127.0.0.1:8081/x")).toBe(false);
    expect(mayAuthorize("http://127.0.0.1:8080", "http://localhost:8080/x")).toBe(false);
    expect(mayAuthorize("https://huggingface.co", "https://huggingface.co/api/models")).toBe(true);
    expect(mayAuthorize("https://huggingface.co", "https://cdn-lfs.hf.co/repos/x")).toBe(true);
    expect(mayAuthorize("https://huggingface.co", "https://cas-bridge.xethub.hf.co/x")).toBe(true);
    expect(mayAuthorize("https://huggingface.co", "https://cdn-lfs-us-1.huggingface.co/x")).toBe(true);
    expect(mayAuthorize("https://huggingface.co", "http://cdn-lfs.hf.co/x")).toBe(false);
    expect(mayAuthorize("https://huggingface.co", "https://evilhf.co/x")).toBe(false);
    expect(mayAuthorize("https://huggingface.co", "https://huggingface.co.evil.com/x")).toBe(false);
    expect(mayAuthorize("https://huggingface.co", "https://s3.amazonaws.com/x")).toBe(false);
    // A mirror's CDN is not Hugging Face's.
    expect(mayAuthorize("https://hf-mirror.example", "https://cdn-lfs.hf.co/x")).toBe(false);
  });
});
