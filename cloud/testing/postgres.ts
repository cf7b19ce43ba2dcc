/**
 * A throwaway PostgreSQL cluster for tests and benchmarks, from Debian's packages
 * (`postgresql`): initdb into a temp folder, `postgres` on a free loopback port, removed on
 * stop. PostgreSQL refuses to run as root, and tests run as root here and in CI, so as root
 * it runs as the `postgres` OS user (setpriv, else runuser) with the folder owned by it.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The folder of initdb/postgres, or null when PostgreSQL is not installed. */
export function postgresBinDir(): string | null {
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    // pg_config also comes with libpq-dev alone, whose bindir has no server.
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return dir;
  } catch {
    // no pg_config: look where Debian puts the server
  }
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

/** Why PostgreSQL tests skip here, or null when they can run. */
export function postgresSkipReason(): string | null {
  return postgresBinDir()
    ? null
    : "no PostgreSQL server binaries (apt-get install postgresql; scripts/install-test-packages.sh does)";
}

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** A fresh, empty database on the cluster; its URL. */
  createDatabase(name?: string): Promise<string>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

/** argv prefix that runs a command as the postgres user when we are root. */
function asPostgres(): { prefix: string[]; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
  // setpriv execs the server itself (no process in between), so a signal reaches postgres.
  const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));
  const prefix = setpriv
    ? [setpriv, `--reuid=${uid}`, `--regid=${gid}`, "--init-groups", "--"]
    : ["runuser", "-u", "postgres", "--"];
  return { prefix, uid, gid };
}

function run(argv: string[], env: NodeJS.ProcessEnv): void {
  execFileSync(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
}

export interface PostgresClusterOptions {
  /**
   * Keep fsync and synchronous commit on (PostgreSQL's defaults), for benchmarks compared with
   * SQLite's synchronous=FULL; tests turn them off (durability is not what they test).
   */
  durable?: boolean;
}

/** Starts a cluster; throws when PostgreSQL is not installed (check postgresSkipReason first). */
export async function startPostgres(opts: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresSkipReason()!);
  const user = asPostgres();
  // As root, under /tmp: $TMPDIR may be inside a folder the postgres user cannot enter.
  const dir = mkdtempSync(join(user.uid !== undefined ? "/tmp" : tmpdir(), "macaron-pg-"));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const data = join(dir, "data");
  const env = { ...process.env, LC_ALL: "C", LANG: "C" };
  run(
    [
      ...user.prefix,
      join(bin, "initdb"),
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-sync",
    ],
    env,
  );

  let child: ChildProcess | null = null;
  let port = 0;
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    const proc = spawn(
      user.prefix[0] ?? join(bin, "postgres"),
      [
        ...user.prefix.slice(1),
        ...(user.prefix.length ? [join(bin, "postgres")] : []),
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        // A test cluster: durability is not what is tested, speed on a loaded machine is needed.
        ...(opts.durable
          ? []
          : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
        "-c",
        "max_connections=200",
      ],
      { env, stdio: ["ignore", "ignore", "pipe"] },
    );
    // The server's own readiness line, not a poll: it logs it once it accepts connections.
    const ready = await new Promise<boolean>((resolve) => {
      let log = "";
      let started = false;
      // Keep reading stderr after start too: a full pipe would block the server's logging.
      proc.stderr.on("data", (d: Buffer) => {
        if (started) return;
        log += d.toString();
        if (log.includes("ready to accept connections")) {
          started = true;
          resolve(true);
        }
      });
      proc.once("exit", () => {
        if (started) return;
        if (!log.includes("could not bind")) console.error(log);
        resolve(false);
      });
    });
    if (ready) child = proc;
  }
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error("postgres did not start (see its log above)");
  }
  const server = child;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let n = 0;
  return {
    url,
    port,
    async createDatabase(name = `t${process.pid}_${++n}_${Date.now() % 1e6}`) {
      const { default: pg } = await import("pg");
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name}"`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once("exit", r));
        server.kill("SIGINT"); // "fast" shutdown: ends sessions, no checkpoint wait
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
