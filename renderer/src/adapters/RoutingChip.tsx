import { useMemo } from "react";
import type { RoutingInfo } from "../../../electron/api";
import { useAdapterState } from "../app/controller-context";
import { adapterNames, describeRouting } from "./adapter-logic";
import { ReleaseDetails } from "./ReleaseDetails";

/**
 * Which adapter(s) answered and how sure the router was, under an assistant answer.
 * The router's reason is the chip's description (tooltip and accessible description).
 * With `messageId`, a "Release details" button beside it shows the release that produced the answer.
 */
export function RoutingChip({ routing, messageId }: { routing: RoutingInfo; messageId?: string }) {
  const adapters = useAdapterState((s) => s.adapters);
  const names = useMemo(() => adapterNames(adapters), [adapters]);
  const { text, label, detail } = describeRouting(routing, names);
  const chip = (
    <span
      className={`routing-chip routing-chip--${routing.mode}`}
      role="note"
      aria-label={label}
      title={detail}
    >
      {text}
    </span>
  );
  if (!messageId) return chip;
  return (
    <>
      {chip}
      <ReleaseDetails messageId={messageId} />
    </>
  );
}
