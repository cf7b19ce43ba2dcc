import { useMemo } from "react";
import type { RoutingInfo } from "../../../electron/api";
import { useAdapterState } from "../app/controller-context";
import { adapterNames, describeRouting } from "../state/adapter-logic";

/**
 * Which adapter(s) answered and how sure the router was, under an assistant answer.
 * The router's reason is the chip's description (tooltip and accessible description).
 */
export function RoutingChip({ routing }: { routing: RoutingInfo }) {
  const adapters = useAdapterState((s) => s.adapters);
  const names = useMemo(() => adapterNames(adapters), [adapters]);
  const { text, label, detail } = describeRouting(routing, names);
  return (
    <span
      className={`routing-chip routing-chip--${routing.mode}`}
      role="note"
      aria-label={label}
      title={detail}
    >
      {text}
    </span>
  );
}
