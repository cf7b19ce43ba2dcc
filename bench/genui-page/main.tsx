/**
 * Benchmark page (bench/genui.ts builds and drives it in Chromium; not part of the app): the
 * app's own GenUI renderer (renderer/src/genui) and streaming parser, timed. Exposes
 * window.genuiBench.
 */
import { useLayoutEffect, useSyncExternalStore } from "react";
import { createRoot } from "react-dom/client";
import { parseDocument, type UiDocument } from "../../electron/api/genui";
import { GenuiDocument } from "../../renderer/src/genui/GenuiDocument";
import { StreamingDocument } from "../../renderer/src/genui/streaming-document";
import "../../renderer/src/styles/base.css";
import "../../renderer/src/styles/chat.css";

const container = document.getElementById("root")!;
const root = createRoot(container);
const nextFrame = () => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now())));

function Committed({ document: doc, onCommit }: { document: UiDocument; onCommit: () => void }) {
  useLayoutEffect(onCommit, [onCommit]);
  return <GenuiDocument document={doc} />;
}

/** Validate JSON text and render it; time each part (render: until the next frame after commit). */
async function render(json: string): Promise<{ validateMs: number; renderMs: number; nodes: number }> {
  root.render(null);
  await nextFrame();
  const t0 = performance.now();
  const checked = parseDocument(json);
  const t1 = performance.now();
  if (!checked.ok) throw new Error(checked.reason);
  await new Promise<void>((resolve) =>
    root.render(<Committed document={checked.document} onCommit={resolve} />),
  );
  const t2 = await nextFrame();
  const nodes = container.querySelectorAll("[data-genui-id]").length;
  return { validateMs: t1 - t0, renderMs: t2 - t1, nodes };
}

/** The text streamed so far, applied once per animation frame like the app's DeltaBatcher. */
class Feed {
  text = "";
  private listeners = new Set<() => void>();
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  get = () => this.text;
  set(text: string) {
    this.text = text;
    for (const l of this.listeners) l();
  }
}

function Streaming({ feed, parser }: { feed: Feed; parser: StreamingDocument }) {
  const text = useSyncExternalStore(feed.subscribe, feed.get);
  return <GenuiDocument document={parser.update(text)} />;
}

/**
 * Stream `json` in `chunk`-character pieces every `intervalMs`; for each node, the time from
 * the piece that completed its JSON arriving to the first frame after it is in the DOM.
 */
async function stream(
  json: string,
  ends: [string, number][],
  chunk: number,
  intervalMs: number,
): Promise<number[]> {
  root.render(null);
  await nextFrame();
  const feed = new Feed();
  const completeAt = new Map<string, number>();
  const shownAt = new Map<string, number>();
  const observer = new MutationObserver(() => {
    const fresh: string[] = [];
    for (const el of container.querySelectorAll("[data-genui-id]")) {
      const id = el.getAttribute("data-genui-id")!;
      if (!shownAt.has(id)) {
        shownAt.set(id, -1);
        fresh.push(id);
      }
    }
    if (fresh.length > 0)
      requestAnimationFrame(() => fresh.forEach((id) => shownAt.set(id, performance.now())));
  });
  observer.observe(container, { childList: true, subtree: true });
  root.render(<Streaming feed={feed} parser={new StreamingDocument()} />);
  let sent = 0;
  let next = 0;
  let pending = false;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      sent = Math.min(json.length, sent + chunk);
      const now = performance.now();
      while (next < ends.length && ends[next]![1] <= sent) completeAt.set(ends[next++]![0], now);
      if (!pending) {
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          feed.set(json.slice(0, sent));
        });
      }
      if (sent >= json.length) {
        clearInterval(timer);
        resolve();
      }
    }, intervalMs);
  });
  // Until every node is on screen (or a generous deadline).
  const deadline = performance.now() + 20_000;
  while ([...completeAt.keys()].some((id) => (shownAt.get(id) ?? -1) < 0) && performance.now() < deadline)
    await nextFrame();
  observer.disconnect();
  return [...completeAt].map(([id, t]) => (shownAt.get(id) ?? Number.NaN) - t);
}

(window as unknown as { genuiBench: unknown }).genuiBench = { render, stream, ready: true };
