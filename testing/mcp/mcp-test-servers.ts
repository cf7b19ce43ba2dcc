/**
 * Real MCP servers for tests and benchmarks: the fixture (testing/mcp/mcp-fixture-server.ts)
 * and `@modelcontextprotocol/server-everything` from npm, as stdio specs or started over
 * Streamable HTTP on loopback (resolved once they print that they listen).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpServerSpec } from "../../electron/api/tools";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const FIXTURE_SERVER = join(REPO_ROOT, "testing/mcp/mcp-fixture-server.ts");
export const EVERYTHING_SERVER = join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** The fixture over stdio; with `callsFile`, every call it receives is appended there; `pageSize` pages tools/list. */
export function fixtureSpec(
  options: { callsFile?: string; env?: Record<string, string>; pageSize?: number } = {},
): McpServerSpec {
  return {
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      FIXTURE_SERVER,
      ...(options.callsFile ? ["--calls-file", options.callsFile] : []),
      ...(options.pageSize ? ["--page-size", String(options.pageSize)] : []),
    ],
    env: options.env ?? {},
    cwd: REPO_ROOT,
  };
}

/** server-everything over stdio. */
export function everythingSpec(env: Record<string, string> = {}): McpServerSpec {
  return { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], env, cwd: REPO_ROOT };
}

export interface HttpServerProcess {
  /** The Streamable HTTP endpoint. */
  url: string;
  child: ChildProcess;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/** A TCP port free right now on 127.0.0.1 (for servers that cannot pick one themselves). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  await new Promise((closed) => server.close(closed));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

function startListening(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<HttpServerProcess> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolveStart, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) resolveStart({ url: match[1] ?? "", child, stop });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`the server exited (${code}) before listening:\n${output}`)),
    );
  });
}

/** The fixture over Streamable HTTP on a free port. */
export function startFixtureHttp(options: { callsFile?: string } = {}): Promise<HttpServerProcess> {
  return startListening(
    process.execPath,
    [
      "--import",
      "tsx",
      FIXTURE_SERVER,
      "--http",
      "0",
      ...(options.callsFile ? ["--calls-file", options.callsFile] : []),
    ],
    { PATH: process.env.PATH },
    /mcp fixture listening on (http:\/\/\S+)/,
  );
}

/** server-everything's Streamable HTTP mode (it reads PORT) on a free port. */
export async function startEverythingHttp(): Promise<HttpServerProcess> {
  const port = await freePort();
  const server = await startListening(
    process.execPath,
    [EVERYTHING_SERVER, "streamableHttp"],
    { PATH: process.env.PATH, PORT: String(port) },
    /listening on port (\d+)/,
  );
  return { ...server, url: `http://127.0.0.1:${port}/mcp` };
}

export const HOSTILE_HTTP_SERVER = join(REPO_ROOT, "testing/mcp/hostile-mcp-http-server.mjs");

/** testing/mcp/hostile-mcp-http-server.mjs in `mode` on a free port (`sse`: answers as event streams). */
export function startHostileHttp(
  mode: string,
  options: { size?: number; sse?: boolean } = {},
): Promise<HttpServerProcess> {
  return startListening(
    process.execPath,
    [
      HOSTILE_HTTP_SERVER,
      "--mode",
      mode,
      ...(options.size === undefined ? [] : ["--size", String(options.size)]),
      ...(options.sse ? ["--sse"] : []),
    ],
    { PATH: process.env.PATH },
    /hostile mcp listening on (http:\/\/\S+)/,
  );
}
