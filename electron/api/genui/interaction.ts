/**
 * Interactions as data (A2UI-style): what a user did with a component, checked against that
 * component's definition before it is stored, recorded as feedback or sent to the model.
 */
import { z } from "zod";
import type { ComponentProps, FormField, UiNode } from "./catalog";

/** One submitted value: text, a number, a checkbox, a choice or several choices. */
export const InteractionValue = z.union([
  z.string().max(10_000),
  z.number().finite(),
  z.boolean(),
  z.null(),
  z.array(z.string().max(64)).max(100),
]);
export type InteractionValue = z.infer<typeof InteractionValue>;
export const InteractionValues = z.record(z.string().max(64), InteractionValue);
export type InteractionValues = z.infer<typeof InteractionValues>;

export const InteractionOutcome = z.enum(["completed", "changed", "abandoned"]);
export type InteractionOutcome = z.infer<typeof InteractionOutcome>;

/** Stored on the user message an interaction became (Message.interaction). */
export const MessageInteraction = z.object({
  /** The assistant message whose component was used. */
  messageId: z.string().min(1).max(64),
  componentId: z.string().min(1).max(64),
  /** The component's type, e.g. "Form". */
  componentType: z.string().max(32),
  /** Its title or label, to show the user what this was about. */
  label: z.string().max(300),
  action: z.string().min(1).max(64),
  values: InteractionValues,
  outcome: InteractionOutcome,
});
export type MessageInteraction = z.infer<typeof MessageInteraction>;

/** What an interaction does: a new turn the model answers, or only a recorded signal. */
export type InteractionEffect = "turn" | "signal";

export type CheckedInteraction =
  | { ok: true; values: InteractionValues; effect: InteractionEffect; label: string; abandoned: boolean }
  | { ok: false; reason: string };

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function isRealDate(s: string): boolean {
  if (!ISO_DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Check one field's value; returns the normalised value or a reason. */
function checkField(
  f: FormField,
  v: InteractionValue | undefined,
  partial: boolean,
): { value: InteractionValue } | { reason: string } {
  const missing = v === undefined || v === null || v === "";
  if (missing) {
    if (f.kind === "checkbox") return { value: false };
    if (!partial && "required" in f && f.required) return { reason: `"${f.label}" is required` };
    return { value: null };
  }
  switch (f.kind) {
    case "text": {
      if (typeof v !== "string") return { reason: `"${f.label}" must be text` };
      if (v.length > (f.maxLength ?? 10_000)) return { reason: `"${f.label}" is too long` };
      return { value: v };
    }
    case "number":
    case "slider": {
      if (typeof v !== "number" || !Number.isFinite(v)) return { reason: `"${f.label}" must be a number` };
      if (f.min !== undefined && v < f.min) return { reason: `"${f.label}" must be at least ${f.min}` };
      if (f.max !== undefined && v > f.max) return { reason: `"${f.label}" must be at most ${f.max}` };
      return { value: v };
    }
    case "select": {
      if (typeof v !== "string" || !f.options.some((o) => o.value === v))
        return { reason: `"${f.label}" must be one of the options` };
      return { value: v };
    }
    case "checkbox":
      if (typeof v !== "boolean") return { reason: `"${f.label}" must be checked or not` };
      return { value: v };
    case "date": {
      if (typeof v !== "string" || !isRealDate(v))
        return { reason: `"${f.label}" must be a date (YYYY-MM-DD)` };
      if (f.min && v < f.min) return { reason: `"${f.label}" must be on or after ${f.min}` };
      if (f.max && v > f.max) return { reason: `"${f.label}" must be on or before ${f.max}` };
      return { value: v };
    }
  }
}

function checkForm(
  props: ComponentProps<"Form">,
  action: string,
  values: InteractionValues,
): CheckedInteraction {
  if (action !== "submit" && action !== "abandon")
    return { ok: false, reason: 'a form knows the actions "submit" and "abandon"' };
  const partial = action === "abandon";
  const names = new Set(props.fields.map((f) => f.name));
  const unknown = Object.keys(values).find((k) => !names.has(k));
  if (unknown !== undefined) return { ok: false, reason: `the form has no field "${unknown.slice(0, 64)}"` };
  const out: InteractionValues = {};
  for (const f of props.fields) {
    const r = checkField(f, values[f.name], partial);
    if ("reason" in r) return { ok: false, reason: r.reason };
    out[f.name] = r.value;
  }
  const label = props.title ?? "Form";
  return partial
    ? { ok: true, values: out, effect: "signal", label, abandoned: true }
    : { ok: true, values: out, effect: "turn", label, abandoned: false };
}

function noValues(values: InteractionValues): boolean {
  return Object.keys(values).length === 0;
}

/**
 * Check what the user did with `node`: the action must be one the component offers and the
 * values must fit its definition (form values against the field definitions, choices against
 * the options). Returns the normalised values and whether it becomes a turn.
 */
export function checkInteraction(
  node: UiNode,
  action: string,
  values: InteractionValues,
): CheckedInteraction {
  switch (node.type) {
    case "Form":
      return checkForm(node.props, action, values);
    case "Button":
      if (action !== node.props.action)
        return { ok: false, reason: `this button's action is "${node.props.action}"` };
      if (!noValues(values)) return { ok: false, reason: "a button sends no values" };
      return { ok: true, values: {}, effect: "turn", label: node.props.label, abandoned: false };
    case "ButtonGroup": {
      const button = node.props.buttons.find((b) => b.action === action);
      if (!button) return { ok: false, reason: "none of these buttons has that action" };
      if (!noValues(values)) return { ok: false, reason: "a button sends no values" };
      return { ok: true, values: {}, effect: "turn", label: button.label, abandoned: false };
    }
    case "ChoiceList": {
      if (action !== "select") return { ok: false, reason: 'a choice list knows the action "select"' };
      const selected = values.selected;
      const extra = Object.keys(values).find((k) => k !== "selected");
      if (extra !== undefined || !Array.isArray(selected) || selected.length === 0)
        return { ok: false, reason: 'a choice list sends {"selected": [values…]} with at least one value' };
      if (!node.props.multiple && selected.length > 1)
        return { ok: false, reason: "only one option can be chosen" };
      if (new Set(selected).size !== selected.length)
        return { ok: false, reason: "an option is chosen twice" };
      const bad = selected.find((v) => !node.props.options.some((o) => o.value === v));
      if (bad !== undefined) return { ok: false, reason: `"${bad}" is not one of the options` };
      return { ok: true, values: { selected }, effect: "turn", label: node.props.label, abandoned: false };
    }
    case "Table": {
      if (action !== "sort") return { ok: false, reason: 'a table knows the action "sort"' };
      if (!node.props.sortable) return { ok: false, reason: "this table is not sortable" };
      const { column, direction } = values;
      const extra = Object.keys(values).find((k) => k !== "column" && k !== "direction");
      if (
        extra !== undefined ||
        typeof column !== "string" ||
        (direction !== "ascending" && direction !== "descending")
      )
        return { ok: false, reason: 'sorting sends {"column": key, "direction": "ascending"|"descending"}' };
      if (!node.props.columns.some((c) => c.key === column))
        return { ok: false, reason: `no column "${column}"` };
      // Sorting goes back to the assistant like any other use (the A2UI loop): which
      // column the user cared about is context the model can answer to.
      return {
        ok: true,
        values: { column, direction },
        effect: "turn",
        label: node.props.caption ?? "Table",
        abandoned: false,
      };
    }
    default:
      return { ok: false, reason: `a ${node.type} cannot be interacted with` };
  }
}

/**
 * The user turn an interaction becomes: one line of compact JSON the model can read (and the
 * search index can find). The UI shows Message.interaction instead of this text.
 */
export function interactionText(
  i: Pick<MessageInteraction, "componentId" | "componentType" | "label" | "action" | "values">,
): string {
  return JSON.stringify({
    uiEvent: {
      component: i.componentId,
      type: i.componentType,
      label: i.label,
      action: i.action,
      values: i.values,
    },
  });
}
