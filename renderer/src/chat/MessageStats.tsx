import type { GenerationStats, Message } from "../../../electron/api";
import { samplingLines, systemPromptLabel } from "../conversations/settings-logic";
import "../conversations/conversation-settings.css";

const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/**
 * The time to first token as the user waited it: Enter → first text on screen when this window
 * sent the question (`waitMs`), else routing + prompt and first token as core measured them.
 * The tooltip names the parts.
 */
export function firstTokenTime(
  stats: Pick<GenerationStats, "ttftMs">,
  routingMs: number | null,
  waitMs: number | null,
): { value: string; parts: string } | null {
  if (stats.ttftMs === null && waitMs === null) return null;
  const routing = routingMs ?? 0;
  const engine = stats.ttftMs ?? 0;
  const total = waitMs ?? routing + engine;
  const parts = [
    routingMs !== null ? `routing ${formatMs(routing)}` : null,
    stats.ttftMs !== null ? `prompt and first token ${formatMs(engine)}` : null,
    waitMs !== null ? `sending and showing ${formatMs(Math.max(0, waitMs - routing - engine))}` : null,
  ].filter(Boolean);
  const what = waitMs !== null ? "From Enter to the first text on screen" : "Routing, prompt and first token";
  return { value: formatMs(total), parts: `${what}: ${parts.join(" + ")}` };
}

/** Speed, latency, length and context usage of one answer. */
export function MessageStats({
  stats,
  routingMs = null,
  waitMs = null,
}: {
  stats: GenerationStats;
  routingMs?: number | null;
  waitMs?: number | null;
}) {
  const items: Array<[string, string, string?]> = [];
  if (stats.tokensPerSecond !== null) items.push(["Speed", `${number.format(stats.tokensPerSecond)} tok/s`]);
  const first = firstTokenTime(stats, routingMs, waitMs);
  if (first) items.push(["Time to first token", first.value, first.parts]);
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
      {items.map(([term, value, detail]) => (
        <div key={term} className="message-stats__item" title={detail ? `${term}. ${detail}` : term}>
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

/**
 * What an answer was generated with (its turn record): the sampling, and whether the
 * conversation's own system prompt replaced the app's (its text on demand).
 */
export function GenerationSettings({ generation }: { generation: NonNullable<Message["generation"]> }) {
  const lines = samplingLines(generation);
  const prompt = generation.systemPrompt;
  return (
    <div className="generation-settings">
      <dl className="message-stats" aria-label="Generation settings">
        {lines.map(({ label, value }) => (
          <div key={label} className="message-stats__item">
            <dt className="visually-hidden">{label}</dt>
            <dd>{`${label} ${value}`}</dd>
          </div>
        ))}
        {prompt === null && (
          <div className="message-stats__item">
            <dt className="visually-hidden">System prompt</dt>
            <dd>{systemPromptLabel(generation)}</dd>
          </div>
        )}
      </dl>
      {prompt !== null && (
        <details className="generation-settings__prompt">
          <summary>{systemPromptLabel(generation)}</summary>
          <p className="generation-settings__prompt-text">{prompt}</p>
        </details>
      )}
    </div>
  );
}
