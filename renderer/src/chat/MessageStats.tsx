import type { GenerationStats } from "../../../electron/api";

const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** Speed, latency, length and context usage of one answer. */
export function MessageStats({ stats }: { stats: GenerationStats }) {
  const items: Array<[string, string]> = [];
  if (stats.tokensPerSecond !== null) items.push(["Speed", `${number.format(stats.tokensPerSecond)} tok/s`]);
  if (stats.ttftMs !== null) items.push(["Time to first token", formatMs(stats.ttftMs)]);
  items.push(["Tokens", `${stats.tokens} tokens`]);
  if (stats.contextTokens !== null && stats.contextSize !== null) {
    const pct = stats.contextSize > 0 ? Math.round((stats.contextTokens / stats.contextSize) * 100) : 0;
    items.push([
      "Context",
      `${stats.contextTokens.toLocaleString()} / ${stats.contextSize.toLocaleString()} context (${pct}%)`,
    ]);
  }
  return (
    <dl className="message-stats" aria-label="Generation statistics">
      {items.map(([term, value]) => (
        <div key={term} className="message-stats__item" title={term}>
          <dt className="visually-hidden">{term}</dt>
          <dd>{term === "Time to first token" ? `TTFT ${value}` : value}</dd>
        </div>
      ))}
    </dl>
  );
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${number.format(ms / 1000)} s`;
}
