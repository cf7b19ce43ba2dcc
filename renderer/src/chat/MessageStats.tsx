import type { GenerationStats, Message } from "../../../electron/api";
import { samplingLines, systemPromptLabel } from "../conversations/settings-logic";
import "../conversations/conversation-settings.css";

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
