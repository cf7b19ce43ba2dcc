/**
 * Pure helpers for the Mixture-of-LoRA UI: how a routing decision and an adapter choice read
 * to a person, and how the adapter picker's values map to the contract's AdapterSelection.
 */
import type { AdapterInfo, AdapterSelection, RoutingInfo } from "../../../electron/api";

/** Adapter id -> display name; unknown ids (a removed adapter) fall back to the id. */
export type AdapterNames = ReadonlyMap<string, string>;

export function adapterNames(adapters: readonly AdapterInfo[] | null | undefined): AdapterNames {
  return new Map((adapters ?? []).map((a) => [a.id, a.name]));
}

function nameOf(names: AdapterNames, id: string): string {
  return names.get(id) ?? id;
}

const scaleFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });

export function formatScale(scale: number): string {
  return scaleFormat.format(scale);
}

/** How a routing decision is shown under an answer. */
export interface RoutingDescription {
  /** Short visible text, e.g. "Coding · auto 82%" or "Blend: Chat 0.5 + Coding 0.5". */
  text: string;
  /** Accessible name, e.g. "Answered by Coding (auto, 82% sure)". */
  label: string;
  /** Longer explanation for the tooltip: the router's reason, versions, scales, latency. */
  detail: string;
}

export function describeRouting(routing: RoutingInfo, names: AdapterNames): RoutingDescription {
  const pct = Math.round(routing.confidence * 100);
  const auto = routing.mode === "auto";
  const used = routing.adapters.filter((a) => a.scale > 0);
  let who: string;
  let whoLabel: string;
  if (routing.mode === "base" || used.length === 0) {
    who = "Base model";
    whoLabel = "the base model";
  } else if (routing.mode === "blend" || used.length > 1) {
    const parts = used.map((a) => `${nameOf(names, a.id)} ${formatScale(a.scale)}`);
    who = `Blend: ${parts.join(" + ")}`;
    whoLabel = `a blend of ${parts.join(" and ")}`;
  } else {
    who = nameOf(names, used[0]!.id);
    whoLabel = who;
  }
  const how = auto ? `auto ${pct}%` : routing.mode === "pinned" ? "pinned" : null;
  const howLabel = auto ? `auto, ${pct}% sure` : routing.mode === "pinned" ? "pinned" : null;
  const versions = used.map((a) => `${nameOf(names, a.id)} v${a.version} at scale ${formatScale(a.scale)}`);
  const detail = [
    routing.reason,
    versions.length > 0 ? versions.join(", ") : null,
    `Routed in ${Math.round(routing.latencyMs)} ms`,
  ]
    .filter(Boolean)
    .join(" — ");
  return {
    text: how ? `${who} · ${how}` : who,
    label: howLabel ? `Answered by ${whoLabel} (${howLabel})` : `Answered by ${whoLabel}`,
    detail,
  };
}

/** The conversation's choice in words (the picker's label for a blend, menus, titles). */
export function describeSelection(selection: AdapterSelection, names: AdapterNames): string {
  if (selection === "auto") return "Auto (router)";
  if (selection === "base") return "Base model only";
  if ("pinned" in selection) return nameOf(names, selection.pinned);
  const parts = Object.entries(selection.blend).map(([id, s]) => `${nameOf(names, id)} ${formatScale(s)}`);
  return `Blend: ${parts.join(" + ")}`;
}

/** Values of the picker's <select>: "auto", "base", "pin:<id>", "blend" (the current blend). */
export function pickerValue(selection: AdapterSelection): string {
  if (selection === "auto" || selection === "base") return selection;
  if ("pinned" in selection) return `pin:${selection.pinned}`;
  return "blend";
}

/** The selection for a picker value; null for values that open the blend editor instead. */
export function selectionFromPicker(value: string): AdapterSelection | null {
  if (value === "auto" || value === "base") return value;
  if (value.startsWith("pin:") && value.length > 4) return { pinned: value.slice(4) };
  return null;
}

/**
 * A blend from the editor's slider values: zero scales are left out; a single adapter stays
 * a blend (its scale may differ from the adapter's own); nothing above zero is "base".
 */
export function blendFromScales(scales: Readonly<Record<string, number>>): AdapterSelection {
  const blend: Record<string, number> = {};
  for (const [id, scale] of Object.entries(scales)) {
    const clamped = Math.min(2, Math.max(0, Math.round(scale * 100) / 100));
    if (clamped > 0) blend[id] = clamped;
  }
  return Object.keys(blend).length === 0 ? "base" : { blend };
}

/** The blend editor's starting values: the current blend, or the pinned adapter at its scale. */
export function initialBlendScales(
  selection: AdapterSelection,
  adapters: readonly AdapterInfo[],
): Record<string, number> {
  const scales: Record<string, number> = {};
  for (const a of adapters) scales[a.id] = 0;
  if (typeof selection === "object") {
    if ("blend" in selection) {
      for (const [id, s] of Object.entries(selection.blend)) if (id in scales) scales[id] = s;
    } else {
      const pinned = adapters.find((a) => a.id === selection.pinned);
      if (pinned) scales[pinned.id] = pinned.scale;
    }
  }
  return scales;
}

/** What answered, as a selection (used to answer again "with the same adapters"). */
export function selectionFromRouting(routing: RoutingInfo): AdapterSelection {
  if (routing.mode === "auto") return "auto";
  const used = routing.adapters.filter((a) => a.scale > 0);
  if (routing.mode === "base" || used.length === 0) return "base";
  if (routing.mode === "pinned" && used.length === 1) return { pinned: used[0]!.id };
  return { blend: Object.fromEntries(used.map((a) => [a.id, a.scale])) };
}

export function sameSelection(a: AdapterSelection, b: AdapterSelection): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  if ("pinned" in a || "pinned" in b) return "pinned" in a && "pinned" in b && a.pinned === b.pinned;
  const ka = Object.keys(a.blend);
  return ka.length === Object.keys(b.blend).length && ka.every((k) => b.blend[k] === a.blend[k]);
}

/**
 * The `adapters` argument of "Regenerate" (same adapters as the answer it replaces).
 * Undefined lets core use the conversation's own choice: that is what answered when the
 * routing matches it or was automatic, and an explicit pin would count as a correction
 * that teaches the router.
 */
export function regenerateSelection(
  routing: RoutingInfo | null,
  conversation: AdapterSelection,
): AdapterSelection | undefined {
  if (!routing) return undefined;
  const answered = selectionFromRouting(routing);
  if (answered === "auto" || sameSelection(answered, conversation)) return undefined;
  return answered;
}

/** Adapters a user can choose for a turn: installed, enabled and fitting the loaded model. */
export function selectableAdapters(adapters: readonly AdapterInfo[] | null): AdapterInfo[] {
  return (adapters ?? []).filter((a) => a.enabled && a.fitsLoadedModel !== false);
}
