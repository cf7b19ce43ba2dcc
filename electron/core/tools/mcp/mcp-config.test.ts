import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { testDir } from "../../../../testing/core/temp-dir";
import { targetOf } from "./mcp-connection";
import { jsonErrorOffset, loadSavedConfig, MCP_CONFIG_FILE, parseMcpConfig, saveConfig } from "./mcp-config";

describe("parseMcpConfig", () => {
  it("reads the mcpServers format other apps write, stdio and HTTP, with defaults", () => {
    const parsed = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
          remote: {
            type: "streamable-http",
            url: "https://example.com/mcp",
            headers: { Authorization: "Bearer k" },
          },
        },
      }),
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.servers).toEqual([
      {
        name: "files",
        spec: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], env: {} },
      },
      {
        name: "remote",
        spec: {
          type: "streamable-http",
          url: "https://example.com/mcp",
          headers: { Authorization: "Bearer k" },
        },
      },
    ]);
  });

  it("names the line and column of a syntax error", () => {
    expect(() => parseMcpConfig('{\n  "mcpServers": {\n    "a": { "command": "x" },\n  }\n}')).toThrow(
      /^The MCP config is not valid JSON at line 4, column 3: /,
    );
    expect(() => parseMcpConfig("[]")).toThrow(/must be a JSON object/);
    expect(() => parseMcpConfig('{"mcpServers": []}')).toThrow(/no "mcpServers" object/);
  });

  it("finds the offset of a syntax error V8 reports without one", () => {
    expect(() => parseMcpConfig('{"mcpServers": {"fx": }}')).toThrow(/at line 1, column 23: /);
    const cases: [string, number][] = [
      ['{"a": }', 6],
      ["[1, 2,]", 6],
      ['{"a": tru}', 9],
      ['{"a": "x\n"}', 8],
      ['{"a": "x\\""}', 12],
      ['{"a": 1} x', 9],
      ["", 0],
      ['{"a": [1, {"b": -0.5e3}]}', 25],
    ];
    for (const [text, offset] of cases) expect([text, jsonErrorOffset(text)]).toEqual([text, offset]);
  });

  it("checks each entry on its own", () => {
    const parsed = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          ok: { command: "node", args: ["server.js"], env: { KEY: "v" } },
          typo: { command: "node", argz: ["x"] },
          url: { url: "not a url" },
          empty: {},
          cline: { command: "node", args: ["s.js"], disabled: false, autoApprove: ["read"], timeout: 60 },
          off: { command: "node", args: ["off.js"], disabled: true },
          legacy: { type: "sse", url: "http://localhost:8000/sse" },
          list: [1],
        },
      }),
    );
    expect(parsed.servers.map((s) => s.name)).toEqual(["ok", "cline"]);
    expect(parsed.servers[1]?.spec).toEqual({ command: "node", args: ["s.js"], env: {} });
    const errors = Object.fromEntries(parsed.errors.map((e) => [e.name, e.message]));
    expect(errors.typo).toMatch(/^The entry is not valid: .*argz/);
    expect(errors.url).toMatch(/^The entry is not valid: url: /);
    expect(errors.legacy).toMatch(/^The old SSE transport \("type": "sse"\) is not supported/);
    expect(errors.empty).toBe('An entry needs a "command" (stdio) or a "url" (Streamable HTTP).');
    expect(errors.off).toBe('Not added: the file marks this server "disabled": true.');
    expect(errors.list).toBe(
      'An entry must be an object with a "command" (stdio) or a "url" (Streamable HTTP).',
    );
  });
});

describe("targetOf", () => {
  it("shows the command line, or the URL without its password and query values", () => {
    expect(targetOf({ command: "npx", args: ["-y", "pkg"], env: { KEY: "secret" } })).toBe("npx -y pkg");
    expect(targetOf({ url: "https://me:pw@example.com/mcp?key=secret&x=1", headers: { A: "secret" } })).toBe(
      "https://me:***@example.com/mcp?key=***&x=***",
    );
    expect(targetOf({ url: "http://127.0.0.1:3001/mcp", headers: {} })).toBe("http://127.0.0.1:3001/mcp");
  });
});

describe("the saved config", () => {
  let dir: string;
  beforeEach(() => {
    dir = testDir("macaron-mcp-config-");
  });

  it("round-trips through mcp.json, 0600, readable as an mcpServers file", async () => {
    const servers = [{ name: "a", spec: { command: "node", args: ["a.js"], env: { TOKEN: "secret" } } }];
    await saveConfig(dir, servers);
    const path = join(dir, MCP_CONFIG_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ mcpServers: { a: servers[0]?.spec } });
    expect(loadSavedConfig(dir, () => undefined)).toEqual({ servers, errors: [] });
  });

  it("a missing file is no servers; an unreadable one is reported under its own name", () => {
    expect(loadSavedConfig(dir, () => undefined)).toEqual({ servers: [], errors: [] });
    writeFileSync(join(dir, MCP_CONFIG_FILE), "{");
    const logged: string[] = [];
    const loaded = loadSavedConfig(dir, (message) => logged.push(message));
    expect(loaded.servers).toEqual([]);
    expect(loaded.errors[0]?.name).toBe(MCP_CONFIG_FILE);
    expect(logged).toEqual(["mcp.json could not be used"]);
  });
});
