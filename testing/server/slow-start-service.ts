/**
 * A service for common/service-cli.test.ts whose start-up lasts until the test writes a line on
 * its stdin: "starting" when it begins, "started" when it ends ("not started" when a signal came
 * meanwhile), "closed" when it is closed.
 */
import { once } from "node:events";
import { runServiceCli } from "../../common/service-cli";

runServiceCli({
  usage: "slow-start-service",
  parse: () => ({ help: false }),
  async start(_args, stopping) {
    // After runServiceCli has set its signal handlers (once start() has returned its promise).
    await new Promise((resolve) => setImmediate(resolve));
    console.log("starting");
    await once(process.stdin, "data");
    process.stdin.pause();
    if (stopping.aborted) {
      console.log("not started");
      stopping.throwIfAborted();
    }
    console.log("started");
    // Running until closed, as a server is while it listens.
    const running = setInterval(() => undefined, 60_000);
    return {
      // Written before close resolves: the process exits right after, and a pipe's pending
      // output would be lost.
      close: () => {
        clearInterval(running);
        return new Promise<void>((resolve) => process.stdout.write("closed\n", () => resolve()));
      },
    };
  },
});
