/**
 * fast-check arbitraries for UI documents: catalog-shaped trees (fc.letrec) and mutations of
 * them: wrong types, extra keys, prototype keys, huge strings, very deep and very wide input.
 * Shared by the property tests (node) and the browser e2e (which renders them).
 */
import fc from "fast-check";
import { deepNode } from "./genui-samples";

const id = fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/);
const text = fc.string({ maxLength: 40 });
const label = fc.string({ minLength: 1, maxLength: 20 });
const num = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
const option = fc.record({ value: id, label });

const field = fc.oneof(
  fc.record(
    { kind: fc.constant("text"), name: id, label, placeholder: fc.option(text, { nil: undefined }) },
    { requiredKeys: ["kind", "name", "label"] },
  ),
  fc.record({ kind: fc.constant("number"), name: id, label, min: fc.constant(0), max: fc.constant(100) }),
  fc.record({
    kind: fc.constant("select"),
    name: id,
    label,
    options: fc.array(option, { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant("checkbox"), name: id, label }),
  fc.record({ kind: fc.constant("date"), name: id, label }),
  fc.record({ kind: fc.constant("slider"), name: id, label, min: fc.constant(0), max: fc.constant(10) }),
);

const leaf = fc.oneof(
  fc.record({ type: fc.constant("Text"), id, props: fc.record({ markdown: text }) }),
  fc.record({
    type: fc.constant("Heading"),
    id,
    props: fc.record({ text: label, level: fc.integer({ min: 1, max: 4 }) }),
  }),
  fc.record({
    type: fc.constant("Link"),
    id,
    props: fc.record({ label, url: fc.oneof(fc.webUrl(), fc.constant("javascript:alert(1)")) }),
  }),
  fc.record({ type: fc.constant("Button"), id, props: fc.record({ label, action: id }) }),
  fc.record({
    type: fc.constant("ButtonGroup"),
    id,
    props: fc.record({ buttons: fc.array(fc.record({ label, action: id }), { minLength: 1, maxLength: 3 }) }),
  }),
  fc.record({
    type: fc.constant("Form"),
    id,
    props: fc.record({ title: label, fields: fc.array(field, { minLength: 1, maxLength: 4 }) }),
  }),
  fc.record({
    type: fc.constant("ChoiceList"),
    id,
    props: fc.record({
      label,
      options: fc.array(option, { minLength: 1, maxLength: 4 }),
      multiple: fc.boolean(),
    }),
  }),
  fc.integer({ min: 1, max: 3 }).chain((cols) =>
    fc.record({
      type: fc.constant("Table"),
      id,
      props: fc.record({
        columns: fc.array(fc.record({ key: id, label }), { minLength: cols, maxLength: cols }),
        rows: fc.array(
          fc.array(fc.oneof(text, num, fc.constant(null)), { minLength: cols, maxLength: cols }),
          { maxLength: 5 },
        ),
        sortable: fc.boolean(),
      }),
    }),
  ),
  fc.integer({ min: 1, max: 4 }).chain((n) =>
    fc.record({
      type: fc.constant("Chart"),
      id,
      props: fc.record({
        kind: fc.constantFrom("bar", "line", "pie"),
        labels: fc.array(label, { minLength: n, maxLength: n }),
        series: fc.array(
          fc.record({
            name: label,
            values: fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: n, maxLength: n }),
          }),
          { minLength: 1, maxLength: 2 },
        ),
      }),
    }),
  ),
  fc.record({
    type: fc.constant("KeyValue"),
    id,
    props: fc.record({
      items: fc.array(fc.record({ key: label, value: text }), { minLength: 1, maxLength: 4 }),
    }),
  }),
  fc.record({
    type: fc.constantFrom("Callout"),
    id,
    props: fc.record({ tone: fc.constantFrom("info", "success", "warning", "error"), markdown: text }),
  }),
  fc.record({
    type: fc.constant("Progress"),
    id,
    props: fc.record({ label, value: fc.integer({ min: 0, max: 100 }) }),
  }),
  fc.record({
    type: fc.constant("CodeBlock"),
    id,
    props: fc.record({ code: text, language: fc.constantFrom("ts", "python", "") }),
  }),
);

/** Catalog-shaped node trees (mostly valid; ids may collide, some props break rules). */
export const nodeTree = fc.letrec<{ node: unknown; container: unknown }>((tie) => ({
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("container")),
  container: fc.oneof(
    fc.record({
      type: fc.constantFrom("Card", "Stack", "Row"),
      id,
      props: fc.constant({}),
      children: fc.array(tie("node"), { maxLength: 4 }),
    }),
    fc.record({
      type: fc.constant("Tabs"),
      id,
      props: fc.record({ label }),
      children: fc.array(
        fc.record({
          type: fc.constant("Tab"),
          id,
          props: fc.record({ label }),
          children: fc.array(tie("node"), { maxLength: 3 }),
        }),
        { maxLength: 3 },
      ),
    }),
  ),
})).node;

export const documentArb = fc.record({
  version: fc.constant(1),
  blocks: fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant("text"), markdown: text }),
      fc.record({ kind: fc.constant("ui"), root: nodeTree }),
    ),
    { minLength: 1, maxLength: 4 },
  ),
});

/**
 * Replace a random sub-value of `value` with `replacement(old)`. Walked iteratively and copied
 * only along the path to that slot (no deep clone: the input may be very deep).
 */
function replaceAt(value: unknown, pick: number, replacement: (old: unknown) => unknown): unknown {
  const paths: (string | number)[][] = [[]];
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0 && paths.length < 2000) {
    const { v, path } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    for (const key of Object.keys(v)) {
      const k = Array.isArray(v) ? Number(key) : key;
      const p = [...path, k];
      paths.push(p);
      stack.push({ v: (v as Record<string, unknown>)[key], path: p });
    }
  }
  const path = paths[pick % paths.length]!;
  const rebuild = (cur: unknown, i: number): unknown => {
    if (i === path.length) return replacement(cur);
    const key = path[i]!;
    // A spread, not Object.assign: an own "__proto__" key stays an own key, as JSON.parse makes
    // it (Object.assign's [[Set]] would make it the copy's prototype).
    const copy = (Array.isArray(cur) ? Object.assign([], cur) : { ...(cur as object) }) as Record<
      string | number,
      unknown
    >;
    const next = rebuild(copy[key], i + 1);
    Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true, configurable: true });
    return copy;
  };
  return rebuild(value, 0);
}

const hostileValue = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 10 }),
  fc.constant("x".repeat(30_000)),
  fc.constant("<script>window.__pwned=1</script>"),
  fc.constant("javascript:window.__pwned=1"),
  fc.constant([]),
  fc.constant({}),
  fc.integer({ min: 20, max: 2000 }).map((d) => deepNode(d)),
  fc
    .integer({ min: 100, max: 5000 })
    .map((n) =>
      Array.from({ length: n }, (_, i) => ({ type: "Text", id: `w${i}`, props: { markdown: "w" } })),
    ),
);

const extraKey = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "style",
    "className",
    "onClick",
    "dangerouslySetInnerHTML",
    "src",
    "href",
  ),
  fc.string({ maxLength: 8 }),
);

/** One mutation applied to a spec. */
const mutation = fc.oneof(
  fc.tuple(fc.nat(), hostileValue).map(
    ([pick, v]) =>
      (spec: unknown) =>
        replaceAt(spec, pick, () => v),
  ),
  fc.tuple(fc.nat(), extraKey, hostileValue).map(
    ([pick, key, v]) =>
      (spec: unknown) =>
        replaceAt(spec, pick, (old) => {
          if (typeof old !== "object" || old === null || Array.isArray(old)) return old;
          // Defined as an own key, as JSON.parse would make it (never via the prototype setter).
          const copy = { ...old };
          Object.defineProperty(copy, key, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          return copy;
        }),
  ),
  fc.nat().map((pick) => (spec: unknown) => replaceAt(spec, pick, () => undefined)),
);

/** Generated documents with 0–3 mutations each. */
export const mutatedDocumentArb = fc
  .tuple(documentArb, fc.array(mutation, { maxLength: 3 }))
  .map(([doc, mutations]) => mutations.reduce<unknown>((spec, m) => m(spec), doc));
