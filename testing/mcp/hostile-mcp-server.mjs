// A hostile MCP server over stdio, plain Node (no SDK, no tsx: it starts in milliseconds), for
// tests and bench/mcp-hostile.ts. `--mode` picks the attack; every mode also lists a small `echo`
// tool that works, so a test can check that the other tools stay usable.
//   huge-schema      a tool whose inputSchema has `--size` (default 30,000) properties
//   deep-schema      a tool whose inputSchema is `--size` (default 2,000) levels deep
//   huge-description a tool with a `--size` (default 1,000,000) character description
//   flood            after `initialized`, `--size` (default 200,000) notifications (list_changed
//                    and log messages) written as fast as the pipe takes them
//   big-result       the tool `big` answers `--size` (default 30,000,000) characters of text
//   normal           only `echo`
// The tool `stats` (every mode) answers {"toolsList": N}, the tools/list requests received so far,
// once the flood (if any) is written: its answer comes after every notification in the pipe.
import process from "node:process";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const mode = option("mode", "normal");
const defaults = {
  "huge-schema": 30_000,
  "deep-schema": 2_000,
  "huge-description": 1_000_000,
  flood: 200_000,
  "big-result": 30_000_000,
};
const size = Number(option("size", String(defaults[mode] ?? 0)));

const echo = {
  name: "echo",
  description: "Answers its text.",
  // An $id: ajv refuses to compile a second schema with the same one into the same instance.
  inputSchema: {
    $id: "urn:hostile:echo",
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  },
};

const stats = { name: "stats", description: "Requests received.", inputSchema: { type: "object" } };
let toolsList = 0;
let flooded = Promise.resolve();

function hostileTools() {
  switch (mode) {
    case "huge-schema": {
      const properties = {};
      for (let i = 0; i < size; i++) properties[`p${i}`] = { type: "string", description: `field ${i}` };
      return [{ name: "huge", description: "Many properties.", inputSchema: { type: "object", properties } }];
    }
    case "deep-schema": {
      let schema = { type: "string" };
      for (let i = 0; i < size; i++) schema = { type: "object", properties: { a: schema } };
      return [{ name: "deep", description: "Deep.", inputSchema: schema }];
    }
    case "huge-description":
      return [{ name: "wordy", description: "x".repeat(size), inputSchema: { type: "object" } }];
    case "big-result":
      return [{ name: "big", description: "A huge answer.", inputSchema: { type: "object" } }];
    default:
      return [];
  }
}

function write(message) {
  return process.stdout.write(JSON.stringify(message) + "\n");
}

async function flood() {
  for (let i = 0; i < size; i++) {
    const note =
      i % 2 === 0
        ? { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
        : { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `line ${i}` } };
    if (!write(note)) await new Promise((resolve) => process.stdout.once("drain", resolve));
  }
}

function handle(message) {
  const { id, method, params } = message;
  if (method === "notifications/initialized") {
    if (mode === "flood") flooded = flood();
    return;
  }
  if (id === undefined) return;
  switch (method) {
    case "initialize":
      return write({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: { listChanged: true }, logging: {} },
          serverInfo: { name: `hostile-${mode}`, version: "1.0.0" },
        },
      });
    case "tools/list":
      toolsList += 1;
      return write({ jsonrpc: "2.0", id, result: { tools: [echo, stats, ...hostileTools()] } });
    case "tools/call": {
      if (params?.name === "echo")
        return write({
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: String(params.arguments?.text) }] },
        });
      if (params?.name === "stats")
        return void flooded.then(() =>
          write({
            jsonrpc: "2.0",
            id,
            result: { content: [{ type: "text", text: JSON.stringify({ toolsList }) }] },
          }),
        );
      if (params?.name === "big")
        return write({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "y".repeat(size) }] } });
      return write({ jsonrpc: "2.0", id, error: { code: -32602, message: `no tool ${params?.name}` } });
    }
    case "ping":
      return write({ jsonrpc: "2.0", id, result: {} });
    default:
      return write({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
}

let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.trim()) handle(JSON.parse(line));
  }
});
process.stdin.on("end", () => process.exit(0));
