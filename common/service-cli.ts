/**
 * The shared life of a long-running command (`npm run serve`, `npm run cloud`): parse the
 * arguments (exit 2 with the usage on a mistake), start, keep running, and on SIGINT/SIGTERM
 * close cleanly (exit 0); a second signal exits at once.
 */
export interface ServiceCli<Args extends { help: boolean }> {
  usage: string;
  parse(argv: string[]): Args;
  /**
   * Starts the service, prints what the user needs (`listening on URL`), returns its closer.
   * `stopping` is aborted by a SIGINT/SIGTERM during start-up: a start that sees it should not
   * begin serving, but close what it started and reject with its reason (an AbortError).
   */
  start(args: Args, stopping: AbortSignal): Promise<{ close(): Promise<void> }>;
}

/** `--port` as a TCP port number (0 picks a free one). */
export function parsePort(value: string | undefined): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0..65535, not ${value}`);
  return port;
}

export function runServiceCli<Args extends { help: boolean }>(cli: ServiceCli<Args>): void {
  let args: Args;
  try {
    args = cli.parse(process.argv.slice(2));
  } catch (err) {
    console.error(`error: ${(err as Error).message}\n\n${cli.usage}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(cli.usage);
    process.exit(0);
  }
  // The signals are handled from the start: one during start-up tells start() (`stopping`) and
  // waits for it (a model load cannot be stopped midway), then closes what it started; before,
  // Node's default ended the process at once and left its children (the engine) to notice.
  const stopping = new AbortController();
  const starting = cli.start(args, stopping.signal);
  const stop = (signal: string) => {
    if (stopping.signal.aborted) process.exit(1); // a second Ctrl-C means now
    console.error(`${signal}: shutting down`);
    stopping.abort();
    starting
      .then(
        (service) => service.close(),
        () => undefined, // reported below
      )
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error("error while shutting down:", err);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  starting.catch((err: unknown) => {
    // A start-up stopped by the signal: stop() exits 0 once it has settled.
    if (stopping.signal.aborted && err instanceof Error && err.name === "AbortError") return;
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
