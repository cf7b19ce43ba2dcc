import { createContext, useContext, useEffect } from "react";
import type { NodeOf } from "../node-types";

/**
 * Told while an inert stand-in is on screen (returns the undo): the answer around it offers
 * "Answer as text" (GenuiAnswer). Null outside an answer (a document rendered on its own).
 */
export const InvalidPartReport = createContext<(() => () => void) | null>(null);

/**
 * The inert stand-in for a part of the answer that broke the catalog (or failed to render):
 * plain text saying so, never the part itself.
 */
export function InvalidView({ reason, children }: { reason: string; children?: React.ReactNode }) {
  const report = useContext(InvalidPartReport);
  useEffect(() => report?.(), [report]);
  return (
    <div className="genui-invalid" role="note" aria-label="Part of the answer could not be shown">
      <span className="genui-invalid__text">Part of this answer could not be shown: {reason}</span>
      {children}
    </div>
  );
}

export function InvalidNodeView({ node, children }: { node: NodeOf<"Invalid">; children?: React.ReactNode }) {
  return <InvalidView reason={node.props.reason}>{children}</InvalidView>;
}
