import type { Message } from "../../../electron/api";
import type { FormField, UiDocument, UiNode } from "../../../electron/api/genui/catalog";
import type { InteractionValue, MessageInteraction } from "../../../electron/api/genui/interaction";
import { useAppState } from "../app/controller-context";

const VERB: Record<string, string> = { submit: "Submitted", select: "Chose", abandon: "Left" };

function findNode(node: UiNode, id: string): UiNode | null {
  if (node.id === id) return node;
  for (const child of node.children ?? []) {
    const found = findNode(child, id);
    if (found) return found;
  }
  return null;
}

/** The fields of the form an interaction used, from the answer that showed it (null: unknown). */
export function formFieldsOf(
  document: UiDocument | null | undefined,
  componentId: string,
): FormField[] | null {
  for (const block of document?.blocks ?? []) {
    if (block.kind !== "ui") continue;
    const node = findNode(block.root, componentId);
    if (node?.type === "Form") return node.props.fields;
  }
  return null;
}

/**
 * Each submitted value under the label the user saw, and a choice's option label rather than
 * its internal value; fields the form does not name (or an unknown form) keep their key.
 */
export function labelledValues(
  values: MessageInteraction["values"],
  fields: readonly FormField[] | null,
): Array<{ key: string; label: string; text: string }> {
  const byName = new Map((fields ?? []).map((f) => [f.name, f]));
  const shown = (f: FormField | undefined, v: InteractionValue): string => {
    const options = f && "options" in f ? f.options : null;
    const optionLabel = (x: string) => options?.find((o) => o.value === x)?.label ?? x;
    if (Array.isArray(v)) return v.map(optionLabel).join(", ");
    if (typeof v === "boolean") return v ? "Yes" : "No";
    return typeof v === "string" ? optionLabel(v) : String(v);
  };
  return Object.entries(values)
    .filter(([, v]) => v !== null && v !== "")
    .map(([key, v]) => {
      const field = byName.get(key);
      return { key, label: field?.label ?? key, text: shown(field, v) };
    });
}

/** A user turn that is the use of a component, shown as what the user did (not its JSON). */
export function InteractionSummary({ interaction }: { interaction: MessageInteraction }) {
  const source = useAppState((s): Message | undefined => {
    for (const list of Object.values(s.messages)) {
      const found = list.find((m) => m.id === interaction.messageId);
      if (found) return found;
    }
    return undefined;
  });
  const entries = labelledValues(interaction.values, formFieldsOf(source?.ui, interaction.componentId));
  const verb = VERB[interaction.action] ?? "Pressed";
  return (
    <div className="genui-event" aria-label="Component interaction">
      <span className="genui-event__what">
        {verb} “{interaction.label}”
      </span>
      {entries.length > 0 && (
        <ul className="genui-event__values">
          {entries.map(({ key, label, text }) => (
            <li key={key}>
              <span className="genui-event__key">{label}</span>: {text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
