import { memo, useEffect, useId, useRef, useState } from "react";
import type { ToolDecision, ToolStep } from "../../../electron/api";
import { TOOL_RESULT_MAX_CHARS } from "../../../electron/api";
import { useChatController } from "../app/controller-context";
import {
  DECISION_LABEL,
  STEP_STATE_LABEL,
  formatArguments,
  formatDuration,
  resultPreview,
  serverLabel,
} from "./tool-logic";

const count = new Intl.NumberFormat();

/**
 * The tool calls of one answer (its trajectory), in order. Everything a tool gave back is
 * data: results and errors are plain text, never markdown or HTML, whatever they say.
 */
export function ToolSteps({ conversationId, steps }: { conversationId: string; steps: readonly ToolStep[] }) {
  if (steps.length === 0) return null;
  return (
    <ol className="tool-steps" aria-label="Tool calls">
      {steps.map((step) => (
        <li key={step.id}>
          <ToolStepCard conversationId={conversationId} step={step} />
        </li>
      ))}
    </ol>
  );
}

/**
 * One call: the tool, its server and arguments; while "pending", the permission question;
 * then its state, duration and result or error.
 */
export const ToolStepCard = memo(function ToolStepCard({
  conversationId,
  step,
}: {
  conversationId: string;
  step: ToolStep;
}) {
  const server = serverLabel(step.server);
  return (
    <section
      className={`tool-step tool-step--${step.state}`}
      role="group"
      aria-label={`Tool call ${step.tool} (${server})`}
    >
      <div className="tool-step__header">
        <code className="tool-step__tool">{step.tool}</code>
        <span className="muted tool-step__server">{server}</span>
        <span className={`badge tool-step__state${stateBadgeClass(step.state)}`}>
          {step.state === "running" && <span className="spinner" aria-hidden="true" />}
          {STEP_STATE_LABEL[step.state]}
        </span>
        {step.durationMs !== null && step.state !== "pending" && (
          <span className="muted tool-step__duration" title="From the call to its result">
            {formatDuration(step.durationMs)}
          </span>
        )}
      </div>
      <details className="tool-step__arguments" open={step.state === "pending" || step.state === "invalid"}>
        <summary>Arguments</summary>
        <pre aria-label="Arguments">{formatArguments(step.arguments)}</pre>
      </details>
      {step.state === "pending" && <PermissionPrompt conversationId={conversationId} step={step} />}
      {step.decision && step.state !== "pending" && (
        <p className="muted tool-step__decision">{DECISION_LABEL[step.decision]}</p>
      )}
      <StepOutcome step={step} />
    </section>
  );
});

function stateBadgeClass(state: ToolStep["state"]): string {
  if (state === "error" || state === "invalid") return " tool-step__state--bad";
  if (state === "pending" || state === "denied" || state === "stopped") return " tool-step__state--warn";
  return "";
}

function StepOutcome({ step }: { step: ToolStep }) {
  switch (step.state) {
    case "done":
      return step.result === null ? null : <ToolResult text={step.result} truncated={step.truncated} />;
    case "error":
      return (
        <>
          <p className="tool-step__error" role="alert">
            {step.error ?? "The tool failed."}
          </p>
          {step.result && <ToolResult text={step.result} truncated={step.truncated} />}
        </>
      );
    case "invalid":
      return (
        <p className="tool-step__error">
          The model&apos;s arguments do not fit the tool, so nothing was called
          {step.error ? `: ${step.error}` : "."}
        </p>
      );
    case "denied":
      return <p className="muted">Not called: you denied it.</p>;
    case "stopped":
      return (
        <p className="muted">
          {step.decision === null
            ? "Stopped before you answered; not called."
            : "Stopped before the tool finished."}
        </p>
      );
    default:
      return null;
  }
}

const DECISION_BUTTONS: { decision: ToolDecision; label: string; className: string }[] = [
  { decision: "once", label: "Allow once", className: " button--primary" },
  { decision: "always", label: "Always allow", className: "" },
  { decision: "deny", label: "Deny", className: " button--ghost" },
];

/**
 * Allow once / Always allow / Deny. Focus moves here when it appears, to the group rather than
 * a button, so that a key meant for the message box cannot answer it by accident.
 */
function PermissionPrompt({ conversationId, step }: { conversationId: string; step: ToolStep }) {
  const chat = useChatController();
  const ref = useRef<HTMLDivElement>(null);
  const questionId = useId();
  const hintId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    ref.current?.focus();
  }, []);

  const decide = async (decision: ToolDecision) => {
    setBusy(true);
    setError(null);
    const problem = await chat.decideTool(conversationId, step.messageId, step.id, decision);
    setBusy(false);
    setError(problem);
  };

  return (
    <div
      ref={ref}
      className="tool-step__prompt"
      role="group"
      aria-labelledby={questionId}
      aria-describedby={hintId}
      tabIndex={-1}
    >
      <p id={questionId} className="tool-step__question">
        Allow <code>{step.tool}</code> from {serverLabel(step.server)} to run with these arguments?
      </p>
      <p id={hintId} className="muted tool-step__hint">
        Nothing runs until you answer. &ldquo;Always allow&rdquo; lets this tool run without asking for the
        rest of this conversation.
      </p>
      <div className="tool-step__actions">
        {DECISION_BUTTONS.map(({ decision, label, className }) => (
          <button
            key={decision}
            type="button"
            className={`button button--small${className}`}
            disabled={busy}
            onClick={() => void decide(decision)}
          >
            {label}
          </button>
        ))}
      </div>
      {error && (
        <p className="tool-step__error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A result as plain text, folded when long; "truncated" when core cut it for the model. */
function ToolResult({ text, truncated }: { text: string; truncated: boolean }) {
  const [expanded, setExpanded] = useState(false);
  const id = useId();
  const preview = resultPreview(text);
  return (
    <div className="tool-step__result">
      <pre id={id} aria-label="Result" tabIndex={0}>
        {expanded || !preview.folded ? text : `${preview.text}…`}
      </pre>
      <div className="tool-step__result-actions">
        {preview.folded && (
          <button
            type="button"
            className="button button--small button--ghost"
            aria-expanded={expanded}
            aria-controls={id}
            onClick={() => setExpanded((v) => !v)}
          >
            {expanded ? "Show less" : `Show all (${count.format(text.length)} characters)`}
          </button>
        )}
        {truncated && (
          <span
            className="badge badge--warn"
            title={`Cut at ${count.format(TOOL_RESULT_MAX_CHARS)} characters`}
          >
            Truncated: the model saw the first {count.format(TOOL_RESULT_MAX_CHARS)} characters
          </span>
        )}
      </div>
    </div>
  );
}
