/**
 * One node of a document: the catalog component for its type, inside its own error boundary,
 * so a component that throws while rendering becomes an inert note and its siblings still show.
 * There is no path from a node to raw HTML, model-written styles or remote URLs: every type maps
 * to one of our components, each of which renders props as text.
 */
import { Component, memo, type ReactNode } from "react";
import type { UiNode } from "../../../electron/api/genui";
import { ButtonGroupView, ButtonView, ChoiceListView } from "./components/choices";
import { ChartView } from "./components/ChartView";
import {
  CalloutView,
  CodeView,
  HeadingView,
  KeyValueView,
  LinkView,
  ProgressView,
  TextView,
} from "./components/content";
import { FormView } from "./components/FormView";
import { InvalidNodeView, InvalidView } from "./components/InvalidView";
import { CardView, RowView, StackView, TabsView } from "./components/layout";
import { TableView } from "./components/TableView";

class NodeBoundary extends Component<{ children: ReactNode }, { failed: string | null }> {
  override state = { failed: null as string | null };

  static getDerivedStateFromError(error: unknown) {
    return { failed: error instanceof Error ? error.message : String(error) };
  }

  override render() {
    if (this.state.failed !== null)
      return <InvalidView reason={`it failed to display (${this.state.failed.slice(0, 200)})`} />;
    return this.props.children;
  }
}

const renderNode = (node: UiNode): ReactNode => <NodeView key={node.id} node={node} />;

function body(node: UiNode): ReactNode {
  const kids = (node.children ?? []).map(renderNode);
  switch (node.type) {
    case "Card":
      return <CardView node={node}>{kids}</CardView>;
    case "Stack":
      return <StackView node={node}>{kids}</StackView>;
    case "Row":
      return <RowView node={node}>{kids}</RowView>;
    case "Tabs":
      return <TabsView node={node} render={renderNode} />;
    case "Tab":
      // Only inside Tabs (validation); TabsView renders its children.
      return <>{kids}</>;
    case "Text":
      return <TextView node={node} />;
    case "Heading":
      return <HeadingView node={node} />;
    case "Link":
      return <LinkView node={node} />;
    case "Form":
      return <FormView node={node} />;
    case "Button":
      return <ButtonView node={node} />;
    case "ButtonGroup":
      return <ButtonGroupView node={node} />;
    case "ChoiceList":
      return <ChoiceListView node={node} />;
    case "Table":
      return <TableView node={node} />;
    case "Chart":
      return <ChartView node={node} />;
    case "KeyValue":
      return <KeyValueView node={node} />;
    case "Callout":
      return <CalloutView node={node} />;
    case "Progress":
      return <ProgressView node={node} />;
    case "CodeBlock":
      return <CodeView node={node} />;
    case "Invalid":
      return <InvalidNodeView node={node}>{kids}</InvalidNodeView>;
    default:
      return <InvalidView reason="unknown component" />;
  }
}

/** Memoized on the node object: a streaming answer re-renders only the nodes that changed. */
export const NodeView = memo(function NodeView({ node }: { node: UiNode }) {
  return (
    <div className="genui-node" data-genui-id={node.id} data-genui-type={node.type}>
      <NodeBoundary>{body(node)}</NodeBoundary>
    </div>
  );
});
