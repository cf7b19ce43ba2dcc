/**
 * The browser's event channel: one WebSocket to /api/events that reconnects with exponential
 * backoff, so a server restart or a sleeping laptop costs a "Reconnecting…" banner, not a reload.
 */
import type { ConnectionMonitor, ConnectionState } from "./connection";

/** The part of the DOM WebSocket we use; injectable so the reconnect logic is testable in Node. */
export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  close(): void;
}

export interface EventSocketOptions {
  url: string;
  createSocket: (url: string) => SocketLike;
  /** Receives each well-formed frame's event name and payload. */
  onEvent: (event: unknown, payload: unknown) => void;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Injectable for tests; defaults to Math.random. */
  random?: () => number;
}

export class EventSocket implements ConnectionMonitor {
  private socket: SocketLike | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private disposed = false;
  private current: ConnectionState = "connecting";
  private readonly listeners = new Set<(state: ConnectionState) => void>();

  constructor(private readonly options: EventSocketOptions) {}

  get state(): ConnectionState {
    return this.current;
  }

  onChange(listener: (state: ConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Open the socket if it is not open or opening yet. */
  start(): void {
    if (this.disposed || this.socket || this.timer) return;
    this.connect();
  }

  /** Close for good: no more reconnects or events. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = socket.onerror = socket.onmessage = socket.onopen = null;
      socket.close();
    }
    this.listeners.clear();
  }

  /** Delay before reconnect attempt `attempt` (0-based): doubling, capped, with ±20% jitter. */
  delayFor(attempt: number): number {
    const initial = this.options.initialDelayMs ?? 500;
    const max = this.options.maxDelayMs ?? 10_000;
    const base = Math.min(max, initial * 2 ** attempt);
    const jitter = 0.8 + 0.4 * (this.options.random ?? Math.random)();
    return Math.round(base * jitter);
  }

  private connect(): void {
    let socket: SocketLike;
    try {
      socket = this.options.createSocket(this.options.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.setState("open");
    };
    socket.onmessage = (ev) => this.receive(ev.data);
    // A failed socket fires error then close; reconnecting on close alone avoids doing it twice.
    socket.onerror = () => {};
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.disposed) return;
    this.setState("reconnecting");
    const delay = this.delayFor(this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.disposed) this.connect();
    }, delay);
  }

  private receive(data: unknown): void {
    if (typeof data !== "string") return;
    let frame: unknown;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof frame !== "object" || frame === null || !("event" in frame)) return;
    const { event, payload } = frame as { event: unknown; payload?: unknown };
    this.options.onEvent(event, payload);
  }

  private setState(state: ConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    for (const listener of [...this.listeners]) listener(state);
  }
}
