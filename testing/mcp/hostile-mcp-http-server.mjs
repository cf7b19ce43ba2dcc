// A hostile MCP server over Streamable HTTP on 127.0.0.1, plain Node (no SDK, no tsx: it starts in
// milliseconds), for mcp-hostile-http.test.ts. It prints "hostile mcp listening on <url>" once it
// listens (`--port`, default 0: any free one). `--mode` picks the attack; every mode also lists a
// small `echo` tool that works, so a test can check that the server stays usable.
//   big-result  the tool `big` answers `--size` (default 30,000,000) characters of text
//   huge-body   the tool `huge` answers one message of `--size` (default 80 MiB) bytes, streamed
//               (no Content-Length; its id comes last, as the SDK's servers write it)
//   flood       the answer to `stats` comes after `--size` (default 200,000) notifications
//               (list_changed and log messages) on the same event stream
//   endless     the standalone (GET) event stream sends list_changed notifications for ever
//   normal      only `echo` and `stats`
// With `--sse`, requests are answered as an event stream (text/event-stream), otherwise as JSON
// (the flood is always a stream). `stats` answers {"toolsList": N}: the tools/list requests
// received so far.
import { createServer } from "node:http";
import process from "node:process";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const mode = option("mode", "normal");
const sse = args.includes("--sse");
const defaults = { "big-result": 30_000_000, "huge-body": 80 * 1024 * 1024, flood: 200_000 };
const size = Number(option("size", String(defaults[mode] ?? 0)));
const session = `hostile-${process.pid}`;

const echo = {
  name: "echo",
  description: "Answers its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
};
const stats = { name: "stats", description: "Requests received.", inputSchema: { type: "object" } };
const hostileTools = {
  "big-result": [{ name: "big", description: "A huge answer.", inputSchema: { type: "object" } }],
  "huge-body": [{ name: "huge", description: "An answer over the limit.", inputSchema: { type: "object" } }],
};
let toolsList = 0;

/** Write `text`, waiting for the socket to drain; false once the client has gone. */
function write(res, text) {
  if (res.destroyed) return Promise.resolve(false);
  if (res.write(text)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok) => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on("drain", onDrain);
    res.on("close", onClose);
  });
}

/** Answer `message` (or what `message()` gives once the notifications `before` are written). */
function answer(res, message, { stream = sse, before = [] } = {}) {
  const final = () => JSON.stringify(typeof message === "function" ? message() : message);
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": session });
    res.end(final());
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": session });
  void (async () => {
    for (const note of before) if (!(await write(res, `data: ${JSON.stringify(note)}\n\n`))) return;
    res.end(`data: ${final()}\n\n`);
  })();
}

function notification(i) {
  return i % 2 === 0
    ? { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
    : { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `line ${i}` } };
}

/** One message of `size` bytes (JSON, or one SSE event), written a MiB at a time. */
async function huge(res, id) {
  const head = '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"';
  const tail = `"}]},"id":${JSON.stringify(id)}}`;
  res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
  if (!(await write(res, (sse ? "data: " : "") + head))) return;
  const chunk = "z".repeat(1024 * 1024);
  for (let left = size - head.length - tail.length; left > 0; left -= chunk.length)
    if (!(await write(res, left >= chunk.length ? chunk : chunk.slice(0, left)))) return;
  res.end(tail + (sse ? "\n\n" : ""));
}

async function endless(res) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const note = `data: ${JSON.stringify(notification(0))}\n\n`;
  const batch = note.repeat(100);
  while (await write(res, batch));
}

function handle(message, res) {
  const { id, method, params } = message;
  if (id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const result = (value) => answer(res, { jsonrpc: "2.0", id, result: value });
  switch (method) {
    case "initialize":
      return result({
        protocolVersion: params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: { listChanged: true }, logging: {} },
        serverInfo: { name: `hostile-http-${mode}`, version: "1.0.0" },
      });
    case "tools/list":
      toolsList += 1;
      return result({ tools: [echo, stats, ...(hostileTools[mode] ?? [])] });
    case "tools/call": {
      const name = params?.name;
      if (name === "echo")
        return result({ content: [{ type: "text", text: String(params.arguments?.text) }] });
      if (name === "stats") {
        const before = mode === "flood" ? Array.from({ length: size }, (_, i) => notification(i)) : [];
        // toolsList is read once the notifications are written.
        return answer(
          res,
          () => ({
            jsonrpc: "2.0",
            id,
            result: { content: [{ type: "text", text: JSON.stringify({ toolsList }) }] },
          }),
          { stream: sse || mode === "flood", before },
        );
      }
      if (name === "big" && mode === "big-result")
        return result({ content: [{ type: "text", text: "y".repeat(size) }] });
      if (name === "huge" && mode === "huge-body") return void huge(res, id);
      return answer(res, { jsonrpc: "2.0", id, error: { code: -32602, message: `no tool ${name}` } });
    }
    case "ping":
      return result({});
    default:
      return answer(res, { jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
}

const server = createServer((req, res) => {
  res.on("error", () => undefined);
  if (req.method === "DELETE") {
    res.writeHead(200).end();
    return;
  }
  if (req.method === "GET") {
    if (mode === "endless") void endless(res);
    else res.writeHead(405).end();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      res.writeHead(400).end("not JSON");
      return;
    }
    handle(message, res);
  });
});

server.listen(Number(option("port", "0")), "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`hostile mcp listening on http://127.0.0.1:${port}/mcp`);
});
process.on("SIGTERM", () => process.exit(0));
