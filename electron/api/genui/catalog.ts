/**
 * The GenUI component catalog, version 1: the only components a model answer can contain, each
 * with strict props (unknown keys are errors). Pure data: no HTML, no styles, no script, no
 * image URLs; the only URLs are Link targets, and only http(s)/mailto.
 *
 * A model answer in UI mode is a `UiDocument`: text blocks (markdown) and UI blocks (a tree of
 * nodes `{type, id, props, children?}`). Validation is per node (see validate.ts): a node that
 * breaks its schema becomes an inert "Invalid" node and the rest of the answer still shows.
 */
import { z } from "zod";

/** Bumped whenever a component or prop changes meaning; part of the harness version. */
export const CATALOG_VERSION = 1;

/** Caps that keep one prop reasonable; resource limits on the whole document are in limits.ts. */
export const PROP_LIMITS = {
  label: 200,
  title: 300,
  markdown: 20_000,
  code: 20_000,
  options: 100,
  fields: 50,
  columns: 50,
  rows: 1000,
  labels: 200,
  series: 8,
  children: 200,
  blocks: 50,
} as const;

const Label = z.string().max(PROP_LIMITS.label);
const Title = z.string().max(PROP_LIMITS.title);
/** An identifier the app uses as data (field names, action names, option values). */
const Name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.:-]+$/, "letters, digits and _ . : - only");
/** A node id: unique within the answer, referenced by interactions. */
export const NodeId = Name;
const Markdown = z.string().max(PROP_LIMITS.markdown);
const Gap = z.enum(["small", "medium", "large"]);
/** A finite number (the grammar lets the model write things like 5E-14 or huge exponents). */
const Num = z.number().finite();
/** YYYY-MM-DD. */
const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD");
/** Link targets: the web and mail only; javascript:, data:, file: and relative URLs are refused. */
export const SafeUrl = z
  .string()
  .max(2000)
  .regex(/^(https?:\/\/[^\s]+|mailto:[^\s]+)$/i, "an http(s) or mailto URL");

// ---- Form fields -------------------------------------------------------------------------

const fieldBase = { name: Name, label: Label, required: z.boolean().optional() };

export const TextField = z.strictObject({
  kind: z.literal("text"),
  ...fieldBase,
  placeholder: Label.optional(),
  multiline: z.boolean().optional(),
  maxLength: z.number().int().min(1).max(10_000).optional(),
  defaultValue: z.string().max(10_000).optional(),
});
export const NumberField = z.strictObject({
  kind: z.literal("number"),
  ...fieldBase,
  min: Num.optional(),
  max: Num.optional(),
  step: Num.positive().optional(),
  defaultValue: Num.optional(),
});
export const Option = z.strictObject({ value: Name, label: Label, description: Label.optional() });
export type Option = z.infer<typeof Option>;
export const SelectField = z.strictObject({
  kind: z.literal("select"),
  ...fieldBase,
  options: z.array(Option).min(1).max(PROP_LIMITS.options),
  defaultValue: Name.optional(),
});
export const CheckboxField = z.strictObject({
  kind: z.literal("checkbox"),
  name: Name,
  label: Label,
  defaultValue: z.boolean().optional(),
});
export const DateField = z.strictObject({
  kind: z.literal("date"),
  ...fieldBase,
  min: IsoDate.optional(),
  max: IsoDate.optional(),
  defaultValue: IsoDate.optional(),
});
export const SliderField = z.strictObject({
  kind: z.literal("slider"),
  name: Name,
  label: Label,
  min: Num,
  max: Num,
  step: Num.positive().optional(),
  defaultValue: Num.optional(),
});
export const FormField = z.discriminatedUnion("kind", [
  TextField,
  NumberField,
  SelectField,
  CheckboxField,
  DateField,
  SliderField,
]);
export type FormField = z.infer<typeof FormField>;

// ---- Component props -----------------------------------------------------------------------

export const ButtonProps = z.strictObject({
  label: Label.min(1),
  /** What the button means, sent back as the interaction's action (e.g. "confirm"). */
  action: Name,
  variant: z.enum(["primary", "secondary", "danger"]).optional(),
});

function uniqueBy<T>(items: readonly T[], key: (t: T) => string): string | null {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) return k;
    seen.add(k);
  }
  return null;
}

const FormProps = z
  .strictObject({
    title: Title.optional(),
    submitLabel: Label.min(1).optional(),
    fields: z.array(FormField).min(1).max(PROP_LIMITS.fields),
  })
  .superRefine((p, ctx) => {
    const dup = uniqueBy(p.fields, (f) => f.name);
    if (dup) ctx.addIssue({ code: "custom", path: ["fields"], message: `duplicate field name "${dup}"` });
    p.fields.forEach((f, i) => {
      if (
        (f.kind === "number" || f.kind === "slider") &&
        f.min !== undefined &&
        f.max !== undefined &&
        f.min > f.max
      )
        ctx.addIssue({ code: "custom", path: ["fields", i], message: "min is above max" });
      if (
        f.kind === "select" &&
        f.defaultValue !== undefined &&
        !f.options.some((o) => o.value === f.defaultValue)
      )
        ctx.addIssue({
          code: "custom",
          path: ["fields", i, "defaultValue"],
          message: "not one of the options",
        });
    });
  });

const ChoiceListProps = z
  .strictObject({
    label: Label.min(1),
    options: z.array(Option).min(1).max(PROP_LIMITS.options),
    multiple: z.boolean().optional(),
    submitLabel: Label.min(1).optional(),
  })
  .superRefine((p, ctx) => {
    const dup = uniqueBy(p.options, (o) => o.value);
    if (dup) ctx.addIssue({ code: "custom", path: ["options"], message: `duplicate option "${dup}"` });
  });

const Cell = z.union([z.string().max(2000), Num, z.boolean(), z.null()]);
export type TableCell = z.infer<typeof Cell>;
const TableProps = z
  .strictObject({
    caption: Title.optional(),
    columns: z
      .array(z.strictObject({ key: Name, label: Label, numeric: z.boolean().optional() }))
      .min(1)
      .max(PROP_LIMITS.columns),
    /** Positional cells, one per column. */
    rows: z.array(z.array(Cell).max(PROP_LIMITS.columns)).max(PROP_LIMITS.rows),
    sortable: z.boolean().optional(),
  })
  .superRefine((p, ctx) => {
    const dup = uniqueBy(p.columns, (c) => c.key);
    if (dup) ctx.addIssue({ code: "custom", path: ["columns"], message: `duplicate column "${dup}"` });
    const bad = p.rows.findIndex((r) => r.length !== p.columns.length);
    if (bad >= 0) ctx.addIssue({ code: "custom", path: ["rows", bad], message: "needs one cell per column" });
  });

const ChartProps = z
  .strictObject({
    kind: z.enum(["bar", "line", "pie"]),
    title: Title.optional(),
    labels: z.array(Label).min(1).max(PROP_LIMITS.labels),
    series: z
      .array(z.strictObject({ name: Label, values: z.array(Num).max(PROP_LIMITS.labels) }))
      .min(1)
      .max(PROP_LIMITS.series),
    unit: z.string().max(20).optional(),
  })
  .superRefine((p, ctx) => {
    p.series.forEach((s, i) => {
      if (s.values.length !== p.labels.length)
        ctx.addIssue({ code: "custom", path: ["series", i, "values"], message: "needs one value per label" });
    });
    if (p.kind === "pie" && p.series.length !== 1)
      ctx.addIssue({ code: "custom", path: ["series"], message: "a pie chart has exactly one series" });
    if (p.kind === "pie" && p.series[0]?.values.some((v) => v < 0))
      ctx.addIssue({
        code: "custom",
        path: ["series", 0],
        message: "a pie chart cannot show negative values",
      });
  });

const ProgressProps = z
  .strictObject({ label: Label.min(1), value: Num.min(0), max: Num.positive().optional() })
  .refine((p) => p.value <= (p.max ?? 100), { message: "value is above max" });

/** Props of every component, by type. Containers are listed in CONTAINERS. */
export const componentProps = {
  Card: z.strictObject({ title: Title.optional(), subtitle: Label.optional() }),
  Stack: z.strictObject({ gap: Gap.optional() }),
  Row: z.strictObject({ gap: Gap.optional(), wrap: z.boolean().optional() }),
  Tabs: z.strictObject({ label: Label.min(1) }),
  Tab: z.strictObject({ label: Label.min(1) }),
  Text: z.strictObject({ markdown: Markdown }),
  Heading: z.strictObject({ text: Title.min(1), level: z.number().int().min(1).max(4).optional() }),
  Link: z.strictObject({ label: Label.min(1), url: SafeUrl }),
  Form: FormProps,
  Button: ButtonProps,
  ButtonGroup: z.strictObject({ label: Label.optional(), buttons: z.array(ButtonProps).min(1).max(10) }),
  ChoiceList: ChoiceListProps,
  Table: TableProps,
  Chart: ChartProps,
  KeyValue: z.strictObject({
    title: Title.optional(),
    items: z
      .array(z.strictObject({ key: Label.min(1), value: z.string().max(2000) }))
      .min(1)
      .max(200),
  }),
  Callout: z.strictObject({
    tone: z.enum(["info", "success", "warning", "error"]),
    title: Title.optional(),
    markdown: Markdown,
  }),
  Progress: ProgressProps,
  CodeBlock: z.strictObject({
    code: z.string().max(PROP_LIMITS.code),
    language: z.string().max(32).optional(),
  }),
} as const;

export type ComponentType = keyof typeof componentProps;
export type ComponentProps<T extends ComponentType> = z.output<(typeof componentProps)[T]>;
export const COMPONENT_TYPES = Object.keys(componentProps) as ComponentType[];

/** Components that hold children; every other node has none. Tabs hold only Tab nodes. */
export const CONTAINERS: ReadonlySet<ComponentType> = new Set(["Card", "Stack", "Row", "Tabs", "Tab"]);

export function isComponentType(t: unknown): t is ComponentType {
  return typeof t === "string" && Object.prototype.hasOwnProperty.call(componentProps, t);
}

// ---- Nodes and documents ---------------------------------------------------------------------

/** A validated node. "Invalid" stands in for a node that broke the catalog (rendered inert). */
export type UiNode =
  | {
      [T in ComponentType]: { type: T; id: string; props: ComponentProps<T>; children?: UiNode[] };
    }[ComponentType]
  | {
      type: "Invalid";
      id: string;
      props: { reason: string; originalType: string | null };
      children?: UiNode[];
    };

export type UiBlock = { kind: "text"; markdown: string } | { kind: "ui"; root: UiNode };
export interface UiDocument {
  version: typeof CATALOG_VERSION;
  blocks: UiBlock[];
}

function nodeSchema<T extends ComponentType>(type: T): z.ZodObject {
  const base = { type: z.literal(type), id: NodeId, props: componentProps[type] };
  if (!CONTAINERS.has(type)) return z.strictObject(base);
  return z.strictObject({
    ...base,
    get children() {
      return z.array(CatalogNode).max(PROP_LIMITS.children);
    },
  });
}

/**
 * What a model may write for one node: a catalog component. Recursive (children); exported as
 * JSON Schema under $defs/UiNode. Cross-node rules (unique ids, Tabs hold Tab) are in validate.ts.
 */
export const CatalogNode: z.ZodType = z
  .discriminatedUnion("type", COMPONENT_TYPES.map((t) => nodeSchema(t)) as [z.ZodObject, ...z.ZodObject[]])
  .meta({ id: "UiNode" });

/** What a model writes in UI mode: text and UI blocks in reading order. */
export const CatalogDocument = z.strictObject({
  version: z.literal(CATALOG_VERSION),
  blocks: z
    .array(
      z.discriminatedUnion("kind", [
        z.strictObject({ kind: z.literal("text"), markdown: Markdown }),
        z.strictObject({ kind: z.literal("ui"), root: CatalogNode }),
      ]),
    )
    .min(1)
    .max(PROP_LIMITS.blocks),
});

const InvalidNode = z.strictObject({
  type: z.literal("Invalid"),
  id: z.string().max(64),
  props: z.strictObject({ reason: z.string().max(500), originalType: z.string().max(64).nullable() }),
  get children() {
    return z.array(StoredNode).max(PROP_LIMITS.children).optional();
  },
});

/**
 * A node as stored with a message (Message.ui): a catalog component or an Invalid stand-in.
 * Structural only (props are records): the stored document was validated node by node when it
 * was made or imported (validateDocument), and re-validating the full catalog on every read
 * would cost more than it protects.
 */
export const StoredNode: z.ZodType<UiNode> = z.lazy(() =>
  z.union([
    InvalidNode,
    z.strictObject({
      type: z.enum(COMPONENT_TYPES as [ComponentType, ...ComponentType[]]),
      id: z.string().max(64),
      props: z.record(z.string(), z.unknown()),
      children: z.array(StoredNode).max(PROP_LIMITS.children).optional(),
    }),
  ]),
) as unknown as z.ZodType<UiNode>;

/** Message.ui: a validated, normalised document. */
export const StoredDocument = z.strictObject({
  version: z.literal(CATALOG_VERSION),
  blocks: z
    .array(
      z.union([
        z.strictObject({ kind: z.literal("text"), markdown: z.string() }),
        z.strictObject({ kind: z.literal("ui"), root: StoredNode }),
      ]),
    )
    .max(PROP_LIMITS.blocks),
}) as unknown as z.ZodType<UiDocument>;
