import type { UiNode } from "../../../electron/api/genui";

/** The node of one component type. */
export type NodeOf<T extends UiNode["type"]> = Extract<UiNode, { type: T }>;

/** Ids become DOM ids: prefixed per answer so two answers never clash. */
export function domId(scope: string, id: string): string {
  return `genui-${scope}-${id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
