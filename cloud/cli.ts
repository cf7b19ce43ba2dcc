/**
 * `npm run cloud -- --port P --data-dir D [--host 127.0.0.1] [--admin-key K] [--database postgres://…]`
 * The reference feedback service; prints `listening on http://HOST:PORT` once it accepts connections.
 * On SIGTERM it stops accepting, answers the requests in flight (their batches are stored), then
 * closes the store's pool and exits 0: replicas can be rolled one by one.
 */
import { BUILTIN_DOMAINS, parseDomainList } from "../common/domains";
import { parseArgs } from "node:util";
import { parsePort, runServiceCli } from "../common/service-cli";
import { DEFAULT_INSTALL_LIMITS, startCloud } from "./server";

const USAGE = `Usage: npm run cloud -- --data-dir DIR [--port 0] [--host 127.0.0.1] [--admin-key KEY]
                         [--database postgres://USER@HOST:PORT/DB]

  --data-dir            cloud.db (SQLite) and the adapter registry's files (required; with several
                        replicas: a folder they share)
  --database            postgres://… runs on PostgreSQL (several replicas may share it);
                        default $MACARON_CLOUD_DATABASE_URL, else SQLite in --data-dir
  --port                TCP port; 0 picks a free one              default 0
  --host                address to bind                           default 127.0.0.1
  --admin-key           key of the export endpoint                default: a random key, printed
  --batches-per-minute  per-install rate cap (429 + Retry-After)  default ${DEFAULT_INSTALL_LIMITS.batchesPerWindow}
  --max-stored-items    per-install storage cap (429)             default ${DEFAULT_INSTALL_LIMITS.maxStoredItems}
  --domains a,b         more domains to accept feedback about, besides ${BUILTIN_DOMAINS.join(", ")}
                        and those of published adapters (a team's own specialists)`;

const positiveInt = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not ${v}`);
  return n;
};

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      "data-dir": { type: "string" },
      "admin-key": { type: "string" },
      database: { type: "string" },
      "batches-per-minute": { type: "string" },
      "max-stored-items": { type: "string" },
      domains: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = parsePort(values.port);
  if (!values.help && !values["data-dir"]) throw new Error("--data-dir is required");
  if (values["admin-key"] !== undefined && values["admin-key"].trim().length < 8)
    throw new Error("--admin-key must have at least 8 characters");
  return {
    help: values.help,
    port,
    host: values.host,
    dataDir: values["data-dir"] ?? "",
    adminKey: values["admin-key"],
    database: values.database ?? process.env.MACARON_CLOUD_DATABASE_URL ?? undefined,
    batchesPerMinute: positiveInt("batches-per-minute", values["batches-per-minute"]),
    maxStoredItems: positiveInt("max-stored-items", values["max-stored-items"]),
    domains: values.domains === undefined ? undefined : parseDomainList(values.domains),
  };
}

runServiceCli({
  usage: USAGE,
  parse,
  async start(args) {
    const cloud = await startCloud({
      host: args.host,
      port: args.port,
      dataDir: args.dataDir,
      adminKey: args.adminKey,
      database: args.database || "sqlite",
      ...(args.domains && { domains: [...BUILTIN_DOMAINS, ...args.domains] }),
      limits: {
        perInstall: {
          ...(args.batchesPerMinute && { batchesPerWindow: args.batchesPerMinute, windowMs: 60_000 }),
          ...(args.maxStoredItems && { maxStoredItems: args.maxStoredItems }),
        },
      },
    });
    if (!args.adminKey) console.log(`admin key: ${cloud.adminKey}`);
    // Apps pin it: the registry URL they are given is `<url>#key=<this key>`.
    console.log(`registry public key: ${cloud.registry.publicKey}`);
    console.log(`listening on ${cloud.url}`);
    return cloud;
  },
});
