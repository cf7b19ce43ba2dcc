/** Components that show content: text, headings, links, callouts, progress, key/values, code. */
import { Label, ProgressBar } from "react-aria-components";
import { CodeBlock } from "../../chat/CodeBlock";
import type { NodeOf } from "../node-types";
import { SafeLink } from "../SafeLink";
import { SafeMarkdown } from "../SafeMarkdown";

export function TextView({ node }: { node: NodeOf<"Text"> }) {
  return <SafeMarkdown text={node.props.markdown} />;
}

export function HeadingView({ node }: { node: NodeOf<"Heading"> }) {
  // Inside a message: the answer's level 1 is the page's h3.
  const level = Math.min(6, (node.props.level ?? 2) + 2);
  const Tag = `h${level}` as "h3";
  return <Tag className="genui-heading">{node.props.text}</Tag>;
}

export function LinkView({ node }: { node: NodeOf<"Link"> }) {
  return (
    <p className="genui-link">
      <SafeLink href={node.props.url}>{node.props.label}</SafeLink>
    </p>
  );
}

const TONE_LABEL = { info: "Note", success: "Success", warning: "Warning", error: "Error" } as const;

export function CalloutView({ node }: { node: NodeOf<"Callout"> }) {
  const { tone, title, markdown } = node.props;
  return (
    <div
      className={`genui-callout genui-callout--${tone}`}
      role="note"
      aria-label={title ?? TONE_LABEL[tone]}
    >
      <strong className="genui-callout__title">{title ?? TONE_LABEL[tone]}</strong>
      <SafeMarkdown text={markdown} />
    </div>
  );
}

export function ProgressView({ node }: { node: NodeOf<"Progress"> }) {
  const { label, value, max = 100 } = node.props;
  return (
    <ProgressBar className="genui-progress" value={value} maxValue={max}>
      {({ percentage, valueText }) => (
        <>
          <div className="genui-progress__head">
            <Label>{label}</Label>
            <span className="genui-progress__value">{valueText}</span>
          </div>
          <div className="genui-progress__track">
            {/* Width from our own computed percentage, never from a model-written style. */}
            <div
              className="genui-progress__fill"
              style={{ width: `${Math.max(0, Math.min(100, percentage ?? 0))}%` }}
            />
          </div>
        </>
      )}
    </ProgressBar>
  );
}

export function KeyValueView({ node }: { node: NodeOf<"KeyValue"> }) {
  return (
    <div className="genui-kv">
      {node.props.title && <strong className="genui-kv__title">{node.props.title}</strong>}
      <dl>
        {node.props.items.map((item, i) => (
          <div key={i} className="genui-kv__row">
            <dt>{item.key}</dt>
            <dd>{item.value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

export function CodeView({ node }: { node: NodeOf<"CodeBlock"> }) {
  const language = node.props.language?.replace(/[^\w+-]/g, "") || null;
  return <CodeBlock code={node.props.code} language={language} />;
}
