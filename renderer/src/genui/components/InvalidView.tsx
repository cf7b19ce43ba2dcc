import type { NodeOf } from "../node-types";

/**
 * The inert stand-in for a part of the answer that broke the catalog (or failed to render):
 * plain text saying so, never the part itself.
 */
export function InvalidView({ reason, children }: { reason: string; children?: React.ReactNode }) {
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
