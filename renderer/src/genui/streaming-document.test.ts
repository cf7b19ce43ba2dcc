import { describe, expect, it } from "vitest";
import type { UiDocument, UiNode } from "../../../electron/api/genui";
import { StreamingDocument } from "./streaming-document";

const doc: UiDocument = {
  version: 1,
  blocks: [
    {
      kind: "ui",
      root: {
        type: "Card",
        id: "card",
        props: { title: "Plan" },
        children: [
          { type: "Text", id: "a", props: { markdown: "first" } },
          { type: "Text", id: "b", props: { markdown: "second" } },
        ],
      },
    },
  ],
};

const ids = (d: UiDocument): string[] => {
  const out: string[] = [];
  const walk = (n: UiNode) => {
    out.push(n.id);
    n.children?.forEach(walk);
  };
  d.blocks.forEach((b) => b.kind === "ui" && walk(b.root));
  return out;
};

describe("StreamingDocument", () => {
  it("shows each component once its JSON is complete, keeping unchanged nodes as the same objects", () => {
    const json = JSON.stringify(doc);
    const s = new StreamingDocument();
    const afterA = json.indexOf('"first"}}') + '"first"}}'.length;
    expect(ids(s.update(json.slice(0, json.indexOf('"props"'))))).toEqual([]);
    // A container shows as soon as its own props are complete, before its children.
    expect(ids(s.update(json.slice(0, json.indexOf('"children"'))))).toEqual(["card"]);
    const partial = s.update(json.slice(0, afterA));
    expect(ids(partial)).toEqual(["card", "a"]);
    const firstChild = (d: UiDocument): UiNode | undefined => {
      const block = d.blocks[0];
      return block?.kind === "ui" ? block.root.children?.[0] : undefined;
    };
    const firstA = firstChild(partial);
    const whole = s.update(json);
    expect(whole).toEqual(doc);
    const againA = firstChild(whole);
    expect(againA).toBe(firstA);
    // Same text: the same document object (no re-render).
    expect(s.update(json)).toBe(whole);
  });

  it("starts over when the text is not a continuation, and ignores garbage after an error", () => {
    const s = new StreamingDocument();
    s.update('{"version":1,"blocks":[{"kind":"text","markdown":"a"}]}');
    const other = s.update('{"version":1,"blocks":[{"kind":"text","markdown":"b"}]}');
    expect(other.blocks).toEqual([{ kind: "text", markdown: "b" }]);
    const s2 = new StreamingDocument();
    expect(s2.update("]]] not json").blocks).toEqual([]);
  });
});
