/** Containers: Card, Stack, Row and Tabs. Children are rendered by NodeView (passed in). */
import type { ReactNode } from "react";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import type { UiNode } from "../../../../electron/api/genui";
import type { NodeOf } from "../node-types";

export type RenderNode = (node: UiNode) => ReactNode;

export function CardView({ node, children }: { node: NodeOf<"Card">; children: ReactNode }) {
  const { title, subtitle } = node.props;
  return (
    <section className="genui-card" aria-label={title || undefined}>
      {(title || subtitle) && (
        <header className="genui-card__header">
          {title && <strong className="genui-card__title">{title}</strong>}
          {subtitle && <span className="genui-card__subtitle">{subtitle}</span>}
        </header>
      )}
      <div className="genui-card__body">{children}</div>
    </section>
  );
}

export function StackView({ node, children }: { node: NodeOf<"Stack">; children: ReactNode }) {
  return <div className={`genui-stack genui-gap--${node.props.gap ?? "medium"}`}>{children}</div>;
}

export function RowView({ node, children }: { node: NodeOf<"Row">; children: ReactNode }) {
  const wrap = node.props.wrap === false ? "" : " genui-row--wrap";
  return <div className={`genui-row genui-gap--${node.props.gap ?? "medium"}${wrap}`}>{children}</div>;
}

export function TabsView({ node, render }: { node: NodeOf<"Tabs">; render: RenderNode }) {
  const tabs = (node.children ?? []).filter((c): c is NodeOf<"Tab"> => c.type === "Tab");
  if (tabs.length === 0) return null;
  return (
    <Tabs className="genui-tabs">
      <TabList aria-label={node.props.label} className="genui-tabs__list">
        {tabs.map((t) => (
          <Tab key={t.id} id={t.id} className="genui-tabs__tab">
            {t.props.label}
          </Tab>
        ))}
      </TabList>
      {tabs.map((t) => (
        <TabPanel key={t.id} id={t.id} className="genui-tabs__panel">
          {(t.children ?? []).map(render)}
        </TabPanel>
      ))}
    </Tabs>
  );
}
