import { describe, expect, it } from "vitest";
import { COMPONENT_TYPES, StoredDocument } from "./catalog";
import { catalogJsonSchema, grammarJsonSchema } from "./json-schema";
import { checkLimits, UI_LIMITS } from "./limits";
import { documentText } from "./text";
import {
  deepNode,
  everyComponentDocument,
  hostileSpecs,
  sizedDocument,
} from "../../../testing/samples/genui-samples";
import { findNode, parseDocument, validateDocument, walkNodes } from "./validate";

/** expect.stringContaining, typed (it returns any). */
const containing = (text: string): string => expect.stringContaining(text) as string;

function valid(raw: unknown): Extract<ReturnType<typeof validateDocument>, { ok: true }> {
  const r = validateDocument(raw);
  if (!r.ok) throw new Error(r.reason);
  return r;
}

describe("validateDocument", () => {
  it("accepts one of every component unchanged, with no issues", () => {
    const doc = everyComponentDocument();
    const r = valid(doc);
    expect(r.issues).toEqual([]);
    expect(r.document).toEqual(doc);
    const types = new Set([...walkNodes(r.document)].map((n) => n.type));
    expect([...types].sort()).toEqual([...COMPONENT_TYPES].sort());
    expect(StoredDocument.safeParse(r.document).success).toBe(true);
  });

  it("stores -0 as 0, so that the document read back equals the one shown (found by fast-check)", () => {
    const spec = {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Table",
            id: "t",
            props: { columns: [{ key: "a", label: "A" }], rows: [[-0], [1]], sortable: false },
          },
        },
      ],
    };
    const r = validateDocument(spec);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(JSON.parse(JSON.stringify(r.document))).toEqual(r.document);
    expect(JSON.stringify(r.document)).toContain('"rows":[[0],[1]]');
  });

  it("turns a bad node into an inert Invalid node and keeps the rest", () => {
    const doc = everyComponentDocument() as unknown as { blocks: { root?: { children?: unknown[] } }[] };
    doc.blocks[1]!.root!.children![1] = { type: "Text", id: "t", props: { markdown: 5 } };
    const r = valid(doc);
    expect(findNode(r.document, "t")).toMatchObject({ type: "Invalid", props: { originalType: "Text" } });
    expect(r.issues).toEqual([{ id: "t", reason: containing("markdown") }]);
    expect(findNode(r.document, "tbl")?.type).toBe("Table");
  });

  it("keeps the children of a container whose own props are bad", () => {
    const r = valid({
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Card",
            id: "c",
            props: { title: 7 },
            children: [{ type: "Text", id: "x", props: { markdown: "kept" } }],
          },
        },
      ],
    });
    const root = findNode(r.document, "c")!;
    expect(root.type).toBe("Invalid");
    expect(root.children?.[0]).toMatchObject({ type: "Text", props: { markdown: "kept" } });
  });

  it("reads null props as absent (the grammar writes null for optional props)", () => {
    const r = valid({
      version: 1,
      blocks: [
        { kind: "ui", root: { type: "Card", id: "c", props: { title: null, subtitle: "s" }, children: [] } },
      ],
    });
    expect(findNode(r.document, "c")).toEqual({
      type: "Card",
      id: "c",
      props: { subtitle: "s" },
      children: [],
    });
  });

  it("refuses duplicate ids, leaves with children, Tab outside Tabs, unknown types and keys", () => {
    const r = valid({
      version: 1,
      blocks: [
        { kind: "ui", root: { type: "Text", id: "a", props: { markdown: "1" } } },
        { kind: "ui", root: { type: "Text", id: "a", props: { markdown: "2" } } },
        {
          kind: "ui",
          root: {
            type: "Text",
            id: "b",
            props: { markdown: "x" },
            children: [{ type: "Text", id: "k", props: { markdown: "y" } }],
          },
        },
        { kind: "ui", root: { type: "Tab", id: "tab", props: { label: "x" }, children: [] } },
        { kind: "ui", root: { type: "Marquee", id: "m", props: {} } },
        { kind: "ui", root: { type: "Text", id: "e", props: { markdown: "x" }, style: "color:red" } },
      ],
    });
    expect(r.issues.map((i) => i.reason)).toEqual([
      containing("used twice"),
      "Text has no children",
      "a Tab belongs inside Tabs",
      'type "Marquee" is not in the catalog',
      'unknown key "style"',
    ]);
  });

  it("keeps stand-ins' ids and reasons when checked again, and never makes up an id already used", () => {
    const raw = {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Card",
            id: "a",
            props: {},
            children: [
              { type: "Text", id: "a", props: { markdown: "twice" } },
              { type: "Text", id: "bad id!", props: { markdown: "x" } },
              "not an object",
            ],
          },
        },
      ],
    };
    const first = validateDocument(raw);
    if (!first.ok) throw new Error(first.reason);
    const again = validateDocument(JSON.parse(JSON.stringify(first.document)));
    if (!again.ok) throw new Error(again.reason);
    // Checked again (a stored answer, an export imported back), the document is the same.
    expect(again.document).toEqual(first.document);
    const kids = (first.document.blocks[0] as { root: { children: { id: string; props: unknown }[] } }).root
      .children;
    expect(kids[0]).toMatchObject({ props: { reason: 'id "a" is used twice', originalType: "Text" } });
    // A made-up id is unique in the document, even next to a stand-in that already has it.
    const clash = validateDocument({
      version: 1,
      blocks: [
        { kind: "ui", root: { type: "Invalid", id: "invalid~1", props: { reason: "old" } } },
        { kind: "ui", root: { type: "Text", id: "no good", props: { markdown: "x" } } },
      ],
    });
    if (!clash.ok) throw new Error(clash.reason);
    const ids = clash.document.blocks.map((b) => (b.kind === "ui" ? b.root.id : ""));
    expect(new Set(ids).size).toBe(2);
  });

  it("refuses unsafe link URLs and checks cross-prop rules", () => {
    for (const url of [
      "javascript:alert(1)",
      "data:text/html,x",
      "//evil.example/x",
      "/relative",
      "file:///etc/passwd",
    ]) {
      const r = valid({
        version: 1,
        blocks: [{ kind: "ui", root: { type: "Link", id: "l", props: { label: "x", url } } }],
      });
      expect(r.document.blocks[0]).toMatchObject({ root: { type: "Invalid" } });
    }
    const chart = valid({
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Chart",
            id: "c",
            props: { kind: "pie", labels: ["a", "b"], series: [{ name: "s", values: [1] }] },
          },
        },
      ],
    });
    expect(chart.issues[0]?.reason).toContain("one value per label");
  });

  it("refuses prototype keys without polluting anything", () => {
    for (const spec of hostileSpecs()) validateDocument(spec);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const r = valid(
      JSON.parse(
        '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Text","id":"p","props":{"markdown":"x","__proto__":{"polluted":1}}}}]}',
      ),
    );
    expect(findNode(r.document, "p")?.type).toBe("Invalid");
  });

  it("refuses a whole document only for its shape or its size", () => {
    expect(validateDocument("text")).toMatchObject({ ok: false });
    expect(validateDocument({ version: 2, blocks: [] })).toMatchObject({
      ok: false,
      reason: containing("version 2"),
    });
    expect(parseDocument("{nope")).toMatchObject({ ok: false, reason: containing("not valid JSON") });
  });
});

describe("limits (checked before any schema)", () => {
  it("refuses very deep input without a RangeError", () => {
    const deep = { version: 1, blocks: [{ kind: "ui", root: deepNode(200_000) }] };
    expect(validateDocument(deep)).toMatchObject({ ok: false, reason: containing("nested") });
    const text = "[".repeat(1_000_000);
    expect(parseDocument(text)).toMatchObject({ ok: false });
  });

  it("refuses an object that inherits from another (keys the own-key walk would not see)", () => {
    // What JSON.parse or a structured clone never makes, and Object.assign of an own "__proto__"
    // key does: a node whose prototype is a node 2,000 deep (a schema reading its `children`
    // would recurse into them). Refused with a reason, no RangeError.
    const node = Object.create(deepNode(2000)) as Record<string, unknown>;
    Object.assign(node, { type: "Text", id: "t", props: { markdown: "x" } });
    const r = validateDocument({ version: 1, blocks: [{ kind: "ui", root: node }] });
    expect(r).toMatchObject({ ok: false, reason: containing("not plain data") });
    const nullProto = Object.assign(Object.create(null) as object, {
      type: "Text",
      id: "n",
      props: { markdown: "x" },
    });
    expect(validateDocument({ version: 1, blocks: [{ kind: "ui", root: nullProto }] }).ok).toBe(true);
  });

  it("counts nodes, string length and total size", () => {
    expect(checkLimits(sizedDocument(1000))).toMatchObject({ ok: true, nodes: 1000 });
    expect(checkLimits(sizedDocument(UI_LIMITS.maxNodes + 10))).toMatchObject({ ok: false });
    expect(checkLimits({ s: "x".repeat(UI_LIMITS.maxStringLength + 1) })).toMatchObject({ ok: false });
    const wide = {
      blocks: Array.from({ length: 1500 }, () => ({ kind: "text", markdown: "y".repeat(19_000) })),
    };
    expect(checkLimits(wide)).toMatchObject({ ok: false, reason: containing("larger") });
    expect(
      checkLimits({ version: 1, blocks: [{ kind: "ui", root: deepNode(UI_LIMITS.maxNodeDepth + 1) }] }),
    ).toMatchObject({ ok: false });
    expect(
      checkLimits({ version: 1, blocks: [{ kind: "ui", root: deepNode(UI_LIMITS.maxNodeDepth - 2) }] }),
    ).toMatchObject({ ok: true });
  });

  it("sizes every sample exactly", () => {
    for (const n of [10, 100, 1000]) expect(valid(sizedDocument(n)).nodes).toBe(n);
  });
});

describe("JSON Schema and text rendition", () => {
  it("exports the catalog with a recursive UiNode, and a grammar subset without anyOf or pattern", () => {
    const schema = catalogJsonSchema() as { $defs: Record<string, unknown> };
    expect(Object.keys(schema.$defs)).toContain("UiNode");
    const grammar = JSON.stringify(grammarJsonSchema());
    expect(grammar).not.toMatch(/"anyOf"|"pattern"|"\$schema"|"minimum"/);
    expect(grammar).toContain('"$ref":"#/$defs/UiNode"');
    expect(grammar).toContain('"format":"date"');
  });

  it("renders a document as markdown text for search and history", () => {
    const text = documentText(everyComponentDocument());
    expect(text).toContain("**Week plan**");
    expect(text).toContain("| Monday | 5 |");
    expect(text).toContain("Form: Log your run");
    expect(text).toContain("Training guide (https://example.com/guide)");
  });
});
