/**
 * `npm run cloud -- --port P --data-dir D [--host 127.0.0.1] [--admin-key K]`
 * The reference feedback service; prints `listening on http://HOST:PORT` once it accepts connections.
 */
import { parseArgs } from "node:util";
import { parsePort, runServiceCli } from "../common/service-cli";
import { startCloud } from "./server";

const USAGE = `Usage: npm run cloud -- --data-dir DIR [--port 0] [--host 127.0.0.1] [--admin-key KEY]

  --data-dir   where cloud.db is kept (required)
  --port       TCP port; 0 picks a free one              default 0
  --host       address to bind                           default 127.0.0.1
  --admin-key  key of the export endpoint                default: a random key, printed`;

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      "data-dir": { type: "string" },
      "admin-key": { type: "string" },
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
    });
    if (!args.adminKey) console.log(`admin key: ${cloud.adminKey}`);
    console.log(`listening on ${cloud.url}`);
    return cloud;
  },
});
