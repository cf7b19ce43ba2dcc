/**
 * `npm run serve -- --host 127.0.0.1 --port P --data-dir D [--model FILE.gguf|hf:USER/REPO[:QUANT]|URL] [--api-key K | --new-key] [--mcp-config FILE]`
 * Headless mode: prints `listening on URL` once connections are accepted.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseMcpConfig, type ParsedConfig } from "../core/tools/mcp/mcp-config";
import { parsePort, runServiceCli } from "../../common/service-cli";
import { spawnNodeEngine } from "../core/engine/spawn-node";
import { earlyEngine } from "./early-engine";
import { parseCorsOrigins } from "./cors";

const USAGE = `Usage: npm run serve -- [--host 127.0.0.1] [--port 0] [--data-dir ~/.macaron] [--model MODEL] [--api-key KEY]

  --host      address to bind (only this one is served)       default 127.0.0.1
  --port      TCP port; 0 picks a free one                     default 0
  --data-dir  database, demo model and adapters                default $MACARON_DATA_DIR or ~/.macaron
  --model     model to load at start: a GGUF file, hf:USER/REPO[:QUANT], hf:USER/REPO/FILE.gguf
              or an https URL; hub models are downloaded into DATA-DIR/models first (progress on
              stderr, an interrupted download resumes; HF_ENDPOINT picks the hub, HF_TOKEN the token)
  --api-key   key every API call must present                  default: the key kept in
              DATA-DIR/server-key, made on the first start; printed at every start
              (the printed URL signs a browser in with a one-time code, never the key;
              kill -USR2 PID prints a new one; browsers stay signed in across restarts)
  --new-key   replace the kept key: every signed-in browser is signed out
  --adapters  folder of LoRA adapters (+ manifests) to install at start
  --max-tokens  answer length limit when a message sets none   default 1024
  --temperature  sampling temperature when a message sets none (0-2; 0 answers the same every time)  default 0.7
  --cors      origins whose web pages may call /v1 and Ollama's /api routes with the key,
              comma-separated (http://localhost:3000,https://app.example; * for any)   default: none
  --mcp-config  an mcpServers JSON file (as other apps write it): its MCP servers start for this
              run, next to the ones added in the app (they are not saved)`;

/** `--mcp-config FILE`, read and checked before anything starts; a bad entry is only skipped. */
function readMcpConfig(path: string): ParsedConfig {
  let json: string;
  try {
    json = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`--mcp-config: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return parseMcpConfig(json);
  } catch (err) {
    throw new Error(`--mcp-config ${path}: ${(err as Error).message}`);
  }
}

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "0" },
      "data-dir": { type: "string" },
      model: { type: "string" },
      "api-key": { type: "string" },
      "new-key": { type: "boolean", default: false },
      adapters: { type: "string" },
      "max-tokens": { type: "string" },
      "mcp-config": { type: "string" },
      temperature: { type: "string" },
      cors: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = parsePort(values.port);
  const maxTokens = values["max-tokens"] === undefined ? undefined : Number(values["max-tokens"]);
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 32768))
    throw new Error(`--max-tokens must be 1..32768, not ${values["max-tokens"]}`);
  const temperature = values.temperature === undefined ? undefined : Number(values.temperature);
  if (
    temperature !== undefined &&
    !(values.temperature!.trim() !== "" && temperature >= 0 && temperature <= 2)
  )
    throw new Error(`--temperature must be 0..2, not ${values.temperature}`);
  if (values["api-key"] !== undefined && values["api-key"].trim() === "")
    throw new Error("--api-key must not be empty");
  if (values["api-key"] !== undefined && values["new-key"])
    throw new Error("--new-key replaces the kept key; it cannot be used with --api-key");
  return {
    help: values.help,
    host: values.host,
    port,
    dataDir: values["data-dir"] ?? process.env.MACARON_DATA_DIR ?? join(homedir(), ".macaron"),
    model: values.model,
    apiKey: values["api-key"],
    newKey: values["new-key"],
    adapters: values.adapters,
    maxTokens,
    mcpConfig: values["mcp-config"] === undefined ? undefined : readMcpConfig(values["mcp-config"]),
    temperature,
    corsOrigins: values.cors === undefined ? undefined : corsOrigins(values.cors),
  };
}

function corsOrigins(text: string): string[] {
  try {
    const origins = parseCorsOrigins(text);
    if (origins.length === 0) throw new Error("no origin given");
    return origins;
  } catch (err) {
    throw new Error(`--cors: ${(err as Error).message}`);
  }
}

runServiceCli({
  usage: USAGE,
  parse,
  async start(args, stopping) {
    for (const { name, message } of args.mcpConfig?.errors ?? [])
      console.error(`warning: --mcp-config: server "${name}" is skipped: ${message}`);
    // The engine first, then the server's modules (HTTP framework, core, migrations): loading
    // them takes about as long as the engine's own start, so the two overlap (early-engine.ts).
    const engine = earlyEngine(spawnNodeEngine());
    const { startServer, LOGIN_CODE_TTL_MS } = await import("./start").catch((err: unknown) => {
      engine.dispose();
      throw err;
    });
    const server = await startServer({
      host: args.host,
      port: args.port,
      dataDir: args.dataDir,
      model: args.model,
      apiKey: args.apiKey,
      newKey: args.newKey,
      defaultMaxTokens: args.maxTokens,
      defaultTemperature: args.temperature,
      adaptersDir: args.adapters,
      mcpServers: args.mcpConfig?.servers,
      corsOrigins: args.corsOrigins,
      onDownloadLine: (line) => console.error(line),
      spawnEngine: engine.spawnEngine,
      stopping,
    }).finally(() => engine.dispose());
    if (server.modelError)
      console.error(`error: could not load ${args.model}: ${server.modelError} (serving without a model)`);
    // Not a key given with --api-key (its owner has it, and logs should not). The kept one at
    // every start: clients need it, and it is the same as last time unless new.
    if (args.apiKey === undefined)
      console.log(
        `api key: ${server.apiKey}${server.generatedKey ? " (new; kept in the data folder)" : " (kept)"}`,
      );
    console.log(`listening on ${server.openUrl}`);
    // The printed code works once, for a few minutes: a running server prints a fresh one when asked.
    const refresh = process.platform === "win32" ? "" : `kill -USR2 ${process.pid}, or `;
    console.log(
      `(the sign-in code works once, within ${LOGIN_CODE_TTL_MS / 60_000} minutes; for a new one: ${refresh}POST /api/login-code with the key)`,
    );
    if (process.platform !== "win32")
      process.on("SIGUSR2", () => console.log(`sign in at ${server.newOpenUrl()}`));
    return server;
  },
});
