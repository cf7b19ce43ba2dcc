import { createContext, useContext } from "react";
import type { ApiClient } from "../../../electron/api";
import type { InteractionValues, MessageInteraction } from "../../../electron/api/genui";

/**
 * What generated components may do, given by whoever renders a document: send an interaction
 * (the only way anything leaves a component), know what was already submitted, and open links
 * through the platform (a confirmed openExternal in Electron, a new tab in the browser).
 */
export interface GenuiActions {
  /** Send an interaction; rejects with a message the component shows. */
  interact(componentId: string, action: string, values: InteractionValues): Promise<void>;
  /** The latest submit/click/choice per component id (from the transcript; survives reloads). */
  submitted: ReadonlyMap<string, MessageInteraction>;
  /** False while the answer streams or where nothing can be sent (read-only views). */
  enabled: boolean;
  platform: ApiClient["platform"];
}

const GenuiContext = createContext<GenuiActions | null>(null);
export const GenuiProvider = GenuiContext.Provider;

const INERT: GenuiActions = {
  interact: () => Promise.reject(new Error("This answer cannot be used here.")),
  submitted: new Map(),
  enabled: false,
  platform: { kind: "browser" },
};

export function useGenui(): GenuiActions {
  return useContext(GenuiContext) ?? INERT;
}
