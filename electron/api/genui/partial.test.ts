import { describe, expect, it } from "vitest";
import { PartialJson, completedPart } from "./partial";
import { everyComponentDocument, runLogDocument } from "../../../testing/samples/genui-samples";
import { validateDocument, walkNodes } from "./validate";

function parse(text: string, chunk = 1): PartialJson {
  const p = new PartialJson();
  for (let i = 0; i < text.length; i += chunk) p.push(text.slice(i, i + chunk));
  return p;
}

describe("PartialJson", () => {
  it("parses a document fed one character at a time exactly like JSON.parse", () => {
    const text = JSON.stringify(everyComponentDocument(), null, 1);
    for (const chunk of [1, 7, 1000]) {
      const p = parse(text, chunk);
      expect(p.done).toBe(true);
      expect(p.error).toBeNull();
      expect(p.root).toEqual(JSON.parse(text));
    }
  });

  it("handles escapes, unicode, numbers and literals split across pieces", () => {
    const value = { s: 'a"b\\c\n\u00e9\u{1F600}', n: [-1.5e-3, 0, 12], t: true, f: false, z: null };
    expect(parse(JSON.stringify(value), 1).root).toEqual(value);
  });

  it("marks containers complete only when they close", () => {
    const p = new PartialJson();
    p.push('{"a":[1,2],"b":{"c":');
    const root = p.root as { a: number[]; b: object };
    expect(p.isComplete(root.a)).toBe(true);
    expect(p.isComplete(root.b)).toBe(false);
    expect(p.isComplete(root)).toBe(false);
    p.push("3}}");
    expect(p.isComplete(root.b) && p.isComplete(root) && p.done).toBe(true);
  });

  it("stops at the first syntax error and keeps what was complete", () => {
    const p = parse('{"version":1,"blocks":[{"kind":"text","markdown":"hi"},{"kind":nope');
    expect(p.error).toMatch(/bad value|unexpected/);
    expect((p.root as { blocks: unknown[] }).blocks[0]).toEqual({ kind: "text", markdown: "hi" });
    expect(parse("]").error).toBeTruthy();
    expect(parse('{"a" 1}').error).toBeTruthy();
    expect(parse("[1,]").error).toBeTruthy();
  });

  it("defines __proto__ as an own key and caps depth", () => {
    const p = parse('{"__proto__":{"polluted":1}}');
    expect(Object.keys(p.root as object)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(p.root)).toBe(Object.prototype);
    expect(parse("[".repeat(100_000)).error).toMatch(/nested/);
  });
});

describe("completedPart", () => {
  it("shows complete nodes and open containers, never open leaves", () => {
    const text = JSON.stringify(everyComponentDocument());
    const p = new PartialJson();
    let seen = 0;
    let grew = 0;
    for (let i = 0; i < text.length; i += 5) {
      p.push(text.slice(i, i + 5));
      const r = validateDocument(completedPart(p));
      if (!r.ok) throw new Error(r.reason);
      // No node is ever shown half-written: nothing invalid appears while streaming.
      expect(r.issues).toEqual([]);
      const count = [...walkNodes(r.document)].length;
      expect(count).toBeGreaterThanOrEqual(seen);
      if (count > seen) grew++;
      seen = count;
    }
    expect(grew).toBeGreaterThan(10);
    expect(validateDocument(completedPart(p))).toMatchObject({
      ok: true,
      document: everyComponentDocument(),
    });
  });

  it("leaves out a leaf until its closing brace arrives", () => {
    const text = JSON.stringify(runLogDocument());
    const cut = text.lastIndexOf("}", text.length - 4);
    const p = new PartialJson();
    p.push(text.slice(0, cut));
    const r = validateDocument(completedPart(p));
    expect(r).toMatchObject({ ok: true });
    if (r.ok) expect(r.document.blocks).toHaveLength(1);
    p.push(text.slice(cut));
    const done = validateDocument(completedPart(p));
    if (done.ok) expect(done.document.blocks).toHaveLength(2);
  });
});
