/**
 * A loopback HTTP proxy that breaks requests on a schedule, for testing the feedback sync
 * against the real service (which has no fault hooks of its own). Faults:
 * - error5xx: answers 500/502/503 (no Retry-After) without forwarding;
 * - throttle: answers 429 with Retry-After without forwarding;
 * - reset: destroys the connection before forwarding;
 * - stall: never answers (the client's timeout must fire);
 * - dropResponse: FORWARDS the request, waits for the server's answer, then destroys the
 *   connection: the server stored the batch, the client never hears it;
 * - forwardThenHold: forwards, then holds the server's answer back forever (emits "held"),
 *   so a test can kill the client at a moment the batch is known to be stored.
 */
import { EventEmitter } from "node:events";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";
import { mulberry32 } from "../../common/prng";

export const FAULTS = [
  "none",
  "error5xx",
  "throttle",
  "reset",
  "stall",
  "dropResponse",
  "forwardThenHold",
] as const;
export type Fault = (typeof FAULTS)[number];

export interface ProxiedRequest {
  n: number;
  method: string;
  path: string;
  fault: Fault;
  /** performance.now() when the request arrived. */
  at: number;
}

export type FaultSchedule = (n: number, req: { method: string; path: string }) => Fault;

/**
 * A seeded schedule: `prefix[n]` for the first requests (to be sure each fault happens), then
 * each fault with its rate (the rest pass through).
 */
export function seededSchedule(
  seed: number,
  rates: Partial<Record<Fault, number>>,
  prefix: Fault[] = [],
): FaultSchedule {
  // common/prng.ts: a failing schedule can be replayed from its seed.
  const random = mulberry32(seed);
  const entries = Object.entries(rates) as [Fault, number][];
  return (n) => {
    const r = random();
    if (n < prefix.length) return prefix[n]!;
    let acc = 0;
    for (const [fault, rate] of entries) {
      acc += rate;
      if (r < acc) return fault;
    }
    return "none";
  };
}

export interface FaultProxyOptions {
  /** The real service, e.g. http://127.0.0.1:4000 */
  target: string;
  schedule: FaultSchedule;
  retryAfterSeconds?: number;
}

/** The running proxy. Events: "request" (ProxiedRequest), "held" (ProxiedRequest). */
export class FaultProxy extends EventEmitter {
  readonly log: ProxiedRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    private readonly opts: FaultProxyOptions,
    readonly url: string,
  ) {
    super();
  }

  /** Starts a proxy on 127.0.0.1 with a free port. */
  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer();
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const addr = server.address();
    const proxy = new FaultProxy(
      server,
      opts,
      `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`,
    );
    server.on("request", (req: IncomingMessage, res: ServerResponse) => proxy.handle(req, res));
    server.on("connection", (s: Socket) => {
      proxy.sockets.add(s);
      s.once("close", () => proxy.sockets.delete(s));
    });
    return proxy;
  }

  /** How many requests took each fault. */
  counts(): Record<Fault, number> {
    const out = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<Fault, number>;
    for (const r of this.log) out[r.fault]++;
    return out;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((ok) => this.server.close(() => ok()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? "/";
    const method = req.method ?? "GET";
    const entry: ProxiedRequest = { n: this.log.length, method, path, fault: "none", at: performance.now() };
    entry.fault = this.opts.schedule(entry.n, { method, path });
    this.log.push(entry);
    this.emit("request", entry);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      switch (entry.fault) {
        case "error5xx": {
          const status = [500, 502, 503][entry.n % 3]!;
          res
            .writeHead(status, { "content-type": "application/json" })
            .end(JSON.stringify({ error: "injected fault" }));
          return;
        }
        case "throttle":
          res
            .writeHead(429, {
              "content-type": "application/json",
              "retry-after": String(this.opts.retryAfterSeconds ?? 1),
            })
            .end(JSON.stringify({ error: "slow down" }));
          return;
        case "reset":
          req.socket.destroy();
          return;
        case "stall":
          return;
        default:
          this.forward(req, body, res, entry);
      }
    });
  }

  private forward(req: IncomingMessage, body: Buffer, res: ServerResponse, entry: ProxiedRequest): void {
    const target = new URL(req.url ?? "/", this.opts.target);
    const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
    delete headers["transfer-encoding"];
    const up = httpRequest(target, { method: req.method, headers }, (upRes) => {
      const parts: Buffer[] = [];
      upRes.on("data", (c: Buffer) => parts.push(c));
      upRes.on("end", () => {
        if (entry.fault === "dropResponse") return void req.socket.destroy();
        if (entry.fault === "forwardThenHold") return void this.emit("held", entry);
        res.writeHead(upRes.statusCode ?? 502, upRes.headers).end(Buffer.concat(parts));
      });
    });
    up.on("error", () => req.socket.destroy());
    up.end(body);
  }
}
