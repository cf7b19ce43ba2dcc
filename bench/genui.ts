/**
 * `npm run bench -- genui`: GenUI costs for documents of 10, 100 and 1,000 nodes.
 * - node: JSON.parse + limits + per-node validation (parseDocument), the streaming parser fed in
 *   token-sized pieces, and the text rendition;
 * - Chromium (the app's own renderer code, on a bench page built here): validation + render
 *   until the next frame, and, while the JSON streams in, the time from a component's JSON
 *   completing to the first frame with it on screen (leaf components: containers are shown
 *   as soon as their own props are complete, before their children).
 */
import { createServer, type Server } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { chromium } from "playwright-core";
import { build } from "vite";
import {
  CONTAINERS,
  PartialJson,
  documentText,
  isComponentType,
  parseDocument,
  type UiDocument,
} from "../electron/api/genui";
import { sizedDocument } from "../testing/samples/genui-samples";
import { CHROMIUM_LAUNCH } from "../e2e/chromium";
import { type BenchRow, median, percentile, report } from "./stats";

const SIZES = [10, 100, 1000] as const;

/** JSON.stringify(doc), plus the offset just after each leaf node's closing brace. */
export function serializeWithEnds(doc: UiDocument): { json: string; ends: [string, number][] } {
  const ends: [string, number][] = [];
  let out = "";
  const write = (value: unknown, isNode: boolean): void => {
    if (Array.isArray(value)) {
      out += "[";
      value.forEach((v, i) => {
        if (i > 0) out += ",";
        write(v, isNode);
      });
      out += "]";
      return;
    }
    if (typeof value !== "object" || value === null) {
      out += JSON.stringify(value);
      return;
    }
    out += "{";
    Object.entries(value).forEach(([k, v], i) => {
      if (i > 0) out += ",";
      out += `${JSON.stringify(k)}:`;
      write(v, k === "root" || (isNode && k === "children"));
    });
    out += "}";
    const node = value as { id?: unknown; type?: unknown };
    if (isNode && typeof node.id === "string" && isComponentType(node.type) && !CONTAINERS.has(node.type))
      ends.push([node.id, out.length]);
  };
  write(doc, false);
  return { json: out, ends };
}

function timeMs(fn: () => void, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

function nodeRows(runs: number): BenchRow[] {
  return SIZES.map((n) => {
    const { json } = serializeWithEnds(sizedDocument(n));
    const validate = timeMs(() => {
      const r = parseDocument(json);
      if (!r.ok || r.nodes !== n) throw new Error(`bad sample of ${n} nodes`);
    }, runs);
    // Token-sized pieces (~4 characters), the way an answer streams.
    const stream = timeMs(() => {
      const p = new PartialJson();
      for (let i = 0; i < json.length; i += 4) p.push(json.slice(i, i + 4));
    }, runs);
    const doc = sizedDocument(n);
    const text = timeMs(() => documentText(doc), runs);
    return {
      name: `${n} nodes (node)`,
      jsonKB: json.length / 1024,
      validateMs: validate,
      streamParseMs: stream,
      textMs: text,
    };
  });
}

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };

async function serve(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = join(dir, new URL(req.url ?? "/", "http://x").pathname.replace(/^\/$/, "/index.html"));
    if (!path.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    readFile(path).then(
      (body) =>
        res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { server, url: `http://127.0.0.1:${address.port}/` };
}

interface BenchApi {
  render(json: string): Promise<{ validateMs: number; renderMs: number; nodes: number }>;
  stream(json: string, ends: [string, number][], chunk: number, intervalMs: number): Promise<number[]>;
}

async function browserRows(runs: number): Promise<BenchRow[]> {
  const root = resolve(import.meta.dirname, "..");
  const outDir = join(root, "out/bench-genui");
  await build({
    root: join(root, "bench/genui-page"),
    base: "./",
    logLevel: "warn",
    plugins: [react()],
    build: { outDir, emptyOutDir: true },
  });
  const { server, url } = await serve(outDir);
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(
      () => (globalThis as unknown as { genuiBench?: { ready: boolean } }).genuiBench?.ready === true,
    );
    const rows: BenchRow[] = [];
    for (const n of SIZES) {
      const { json, ends } = serializeWithEnds(sizedDocument(n));
      const renders = [];
      for (let i = 0; i < runs; i++) {
        renders.push(
          await page.evaluate(
            (j) => (globalThis as unknown as { genuiBench: BenchApi }).genuiBench.render(j),
            json,
          ),
        );
      }
      // ~250 tokens/s of ~4 characters for the small documents; faster for 1,000 nodes.
      const chunk = n === 1000 ? 64 : 16;
      const latencies = await page.evaluate(
        ([j, e, c]) => (globalThis as unknown as { genuiBench: BenchApi }).genuiBench.stream(j, e, c, 16),
        [json, ends, chunk] as const,
      );
      const valid = latencies.filter((l) => Number.isFinite(l));
      rows.push({
        name: `${n} nodes (Chromium)`,
        validateMs: median(renders.map((r) => r.validateMs)),
        renderMs: median(renders.map((r) => r.renderMs)),
        nodesOnScreen: renders[0]!.nodes,
        streamCharsPerSec: (chunk * 1000) / 16,
        leafLatencyP50Ms: median(valid),
        leafLatencyP95Ms: percentile(valid, 95),
        leafLatencyMaxMs: Math.max(...valid),
        leavesMeasured: valid.length,
        leavesMissed: latencies.length - valid.length,
      });
    }
    if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
    return rows;
  } finally {
    await browser.close();
    server.close();
  }
}

export async function benchGenui({ runs = 5 }: { runs?: number } = {}): Promise<void> {
  const rows = [...nodeRows(Math.max(20, runs * 10)), ...(await browserRows(runs))];
  report("genui", rows, {
    note: "latency = JSON of a leaf complete in the stream → first frame with it in the DOM",
  });
}
