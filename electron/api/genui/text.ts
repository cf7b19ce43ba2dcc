/**
 * A plain-text (markdown) rendition of a UI document: stored as the message's content, so that
 * search, export, copy and the next prompt's history see what the answer said.
 */
import type { UiDocument, UiNode } from "./catalog";

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function nodeLines(node: UiNode): string[] {
  switch (node.type) {
    case "Heading":
      return [`${"#".repeat(Math.min(6, (node.props.level ?? 2) + 1))} ${oneLine(node.props.text)}`];
    case "Text":
      return [node.props.markdown];
    case "Card":
      return node.props.title ? [`**${oneLine(node.props.title)}**`] : [];
    case "Tab":
      return [`**${oneLine(node.props.label)}**`];
    case "Tabs":
      return [oneLine(node.props.label)];
    case "Link":
      return [`${oneLine(node.props.label)} (${node.props.url})`];
    case "Form":
      return [
        `Form${node.props.title ? `: ${oneLine(node.props.title)}` : ""}`,
        ...node.props.fields.map((f) => `- ${oneLine(f.label)} (${f.kind})`),
      ];
    case "Button":
      return [`[${oneLine(node.props.label)}]`];
    case "ButtonGroup":
      return [node.props.buttons.map((b) => `[${oneLine(b.label)}]`).join(" ")];
    case "ChoiceList":
      return [oneLine(node.props.label), ...node.props.options.map((o) => `- ${oneLine(o.label)}`)];
    case "Table": {
      const { columns, rows, caption } = node.props;
      const cell = (v: string | number | boolean | null) =>
        oneLine(v === null ? "" : String(v)).replace(/\|/g, "\\|");
      return [
        ...(caption ? [oneLine(caption)] : []),
        `| ${columns.map((c) => cell(c.label)).join(" | ")} |`,
        `| ${columns.map(() => "---").join(" | ")} |`,
        ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
      ];
    }
    case "Chart": {
      const { kind, title, labels, series, unit } = node.props;
      return [
        `${kind} chart${title ? `: ${oneLine(title)}` : ""}`,
        ...series.map(
          (s) =>
            `- ${oneLine(s.name)}: ${labels.map((l, i) => `${oneLine(l)} ${s.values[i] ?? ""}${unit ?? ""}`).join(", ")}`,
        ),
      ];
    }
    case "KeyValue":
      return [
        ...(node.props.title ? [`**${oneLine(node.props.title)}**`] : []),
        ...node.props.items.map((i) => `- ${oneLine(i.key)}: ${oneLine(i.value)}`),
      ];
    case "Callout":
      return [
        `> ${node.props.title ? `**${oneLine(node.props.title)}** ` : ""}${oneLine(node.props.markdown)}`,
      ];
    case "Progress":
      return [`${oneLine(node.props.label)}: ${node.props.value}/${node.props.max ?? 100}`];
    case "CodeBlock":
      return ["```" + (node.props.language ?? "").replace(/[^\w+-]/g, ""), node.props.code, "```"];
    case "Stack":
    case "Row":
      return [];
    case "Invalid":
      return ["[a component that could not be shown]"];
  }
}

/** The document as markdown text, in reading order (iterative over the tree). */
export function documentText(doc: UiDocument): string {
  const parts: string[] = [];
  for (const block of doc.blocks) {
    if (block.kind === "text") {
      parts.push(block.markdown);
      continue;
    }
    const stack: UiNode[] = [block.root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      const lines = nodeLines(node);
      if (lines.length > 0) parts.push(lines.join("\n"));
      const kids = node.children ?? [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
    }
  }
  return parts.join("\n\n");
}
