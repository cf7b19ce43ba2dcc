import type { MessageInteraction } from "../../../electron/api/genui";

const VERB: Record<string, string> = { submit: "Submitted", select: "Chose", abandon: "Left" };

/** A user turn that is the use of a component, shown as what the user did (not its JSON). */
export function InteractionSummary({ interaction }: { interaction: MessageInteraction }) {
  const entries = Object.entries(interaction.values).filter(([, v]) => v !== null && v !== "");
  const verb = VERB[interaction.action] ?? "Pressed";
  return (
    <div className="genui-event" aria-label="Component interaction">
      <span className="genui-event__what">
        {verb} “{interaction.label}”
      </span>
      {entries.length > 0 && (
        <ul className="genui-event__values">
          {entries.map(([k, v]) => (
            <li key={k}>
              <span className="genui-event__key">{k}</span>: {Array.isArray(v) ? v.join(", ") : String(v)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
