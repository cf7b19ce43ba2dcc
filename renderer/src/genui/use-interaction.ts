import { useCallback, useState } from "react";
import type { InteractionValues } from "../../../electron/api/genui";
import { useGenui } from "./genui-context";

/** Send interactions of one component, with its pending state and last error. */
export function useInteraction(componentId: string) {
  const genui = useGenui();
  const { enabled, submitted } = genui;
  const interact = genui.interact.bind(genui);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = useCallback(
    async (action: string, values: InteractionValues): Promise<boolean> => {
      setBusy(true);
      setError(null);
      try {
        await interact(componentId, action, values);
        return true;
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
        return false;
      } finally {
        setBusy(false);
      }
    },
    [interact, componentId],
  );
  return { send, busy, error, enabled, last: submitted.get(componentId) ?? null };
}
