/**
 * Validate and normalise an untrusted UI document (model output, an import) node by node.
 * Order matters: resource limits first (an iterative walk, see limits.ts), then the document
 * shape, then each node against its component's strict schema. A node that fails becomes an
 * inert "Invalid" node and the rest of the answer still shows; only a document that breaks the
 * limits or has no usable shape at all is refused whole. Never throws.
 */
import {
  CATALOG_VERSION,
  CONTAINERS,
  NodeId,
  PROP_LIMITS,
  componentProps,
  isComponentType,
  type UiBlock,
  type UiDocument,
  type UiNode,
} from "./catalog";
import { jsonDepth } from "../../../common/json-depth";
import { FORBIDDEN_KEYS, UI_LIMITS, checkLimits, type UiLimits } from "./limits";

export interface NodeIssue {
  /** The node's id (or a generated one when it had none). */
  id: string;
  reason: string;
}

export type ValidationResult =
  { ok: true; document: UiDocument; issues: NodeIssue[]; nodes: number } | { ok: false; reason: string };

const NODE_KEYS: ReadonlySet<string> = new Set(["type", "id", "props", "children"]);
const REASON_MAX = 300;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function short(text: string, max = REASON_MAX): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A copy of a props value without null-valued object keys: the grammar lets the model write
 * `null` for an optional prop it does not use, and the catalog has no nullable props (table
 * cells, array items, keep their nulls). Refuses prototype keys instead of copying them.
 */
function withoutNullKeys(
  value: unknown,
  depth = 0,
): { ok: true; value: unknown } | { ok: false; key: string } {
  // Bounded by the limits walk (maxJsonDepth), so this recursion is shallow.
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const r = withoutNullKeys(item, depth + 1);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return { ok: true, value: out };
  }
  if (!isPlainObject(value)) return { ok: true, value };
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return { ok: false, key };
    const v = value[key];
    if (v === null) continue;
    const r = withoutNullKeys(v, depth + 1);
    if (!r.ok) return r;
    out[key] = r.value;
  }
  return { ok: true, value: out };
}

function describe(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  if (!first) return "invalid props";
  const where = first.path.length > 0 ? first.path.map(String).join(".") : "props";
  return short(`${where}: ${first.message}`);
}

interface Walk {
  ids: Set<string>;
  issues: NodeIssue[];
  nodes: number;
  generated: number;
}

function invalid(walk: Walk, id: string, reason: string, originalType: unknown, children?: UiNode[]): UiNode {
  walk.issues.push({ id, reason });
  const type = typeof originalType === "string" ? short(originalType, 64) : null;
  const node: UiNode = { type: "Invalid", id, props: { reason: short(reason), originalType: type } };
  if (children && children.length > 0) node.children = children;
  return node;
}

/**
 * Ids made up here for stand-ins carry a "~", which NodeId does not allow: they never clash
 * with a real id, and a stand-in coming back (export/import, a stored answer checked again)
 * keeps its id and reason instead of being re-flagged for its own id.
 */
const GENERATED_ID = /^(?:[A-Za-z0-9_.:-]{1,40}~dup|invalid~)\d{1,9}$/;

/** A fresh made-up id, unused in this document. */
function generatedId(walk: Walk, stem: string): string {
  let id: string;
  do id = `${stem}${++walk.generated}`;
  while (walk.ids.has(id));
  walk.ids.add(id);
  return id;
}

function nodeId(walk: Walk, raw: Record<string, unknown>): { id: string; problem: string | null } {
  if (
    raw.type === "Invalid" &&
    typeof raw.id === "string" &&
    GENERATED_ID.test(raw.id) &&
    !walk.ids.has(raw.id)
  ) {
    walk.ids.add(raw.id);
    return { id: raw.id, problem: null };
  }
  const parsed = NodeId.safeParse(raw.id);
  if (!parsed.success) {
    return {
      id: generatedId(walk, "invalid~"),
      problem: "id: a node needs an id of letters, digits and _ . : -",
    };
  }
  if (walk.ids.has(parsed.data)) {
    return {
      id: generatedId(walk, `${parsed.data.slice(0, 40)}~dup`),
      problem: `id "${parsed.data}" is used twice`,
    };
  }
  walk.ids.add(parsed.data);
  return { id: parsed.data, problem: null };
}

function validateNode(raw: unknown, walk: Walk, parentType: string | null): UiNode {
  walk.nodes++;
  if (!isPlainObject(raw)) {
    return invalid(walk, generatedId(walk, "invalid~"), "a component must be an object", null);
  }
  const { id, problem } = nodeId(walk, raw);
  const type = raw.type;
  // Children first: a container with a bad prop still shows what it held.
  let children: UiNode[] = [];
  const rawChildren = raw.children;
  let childProblem: string | null = null;
  if (rawChildren !== undefined && rawChildren !== null) {
    if (!Array.isArray(rawChildren)) childProblem = "children: must be a list of components";
    else if (rawChildren.length > PROP_LIMITS.children)
      childProblem = `children: at most ${PROP_LIMITS.children} components`;
    else children = rawChildren.map((c) => validateNode(c, walk, typeof type === "string" ? type : null));
  }
  if (problem) return invalid(walk, id, problem, type, children);
  const extra = Object.keys(raw).find((k) => !NODE_KEYS.has(k));
  if (extra !== undefined) return invalid(walk, id, `unknown key "${short(extra, 40)}"`, type, children);
  if (type === "Invalid") {
    // An exported stand-in coming back (export/import): it stays inert, with its reason.
    const props = isPlainObject(raw.props) ? raw.props : {};
    const reason = typeof props.reason === "string" ? props.reason : "a component that could not be shown";
    return invalid(walk, id, reason, props.originalType, children);
  }
  if (!isComponentType(type)) {
    const name = typeof type === "string" ? `"${short(type, 40)}"` : "missing";
    return invalid(walk, id, `type ${name} is not in the catalog`, type, children);
  }
  if (childProblem) return invalid(walk, id, childProblem, type, children);
  if (children.length > 0 && !CONTAINERS.has(type))
    return invalid(walk, id, `${type} has no children`, type, children);
  if (type === "Tabs" && children.some((c) => c.type !== "Tab"))
    return invalid(walk, id, "Tabs may hold only Tab components", type, children);
  if (type === "Tab" && parentType !== "Tabs")
    return invalid(walk, id, "a Tab belongs inside Tabs", type, children);
  const cleaned = withoutNullKeys(raw.props ?? {});
  if (!cleaned.ok) return invalid(walk, id, `forbidden key "${cleaned.key}"`, type, children);
  const props = componentProps[type].safeParse(cleaned.value);
  if (!props.success) return invalid(walk, id, describe(props.error.issues), type, children);
  const node = { type, id, props: props.data } as UiNode;
  if (CONTAINERS.has(type)) node.children = children;
  return node;
}

function validateBlock(raw: unknown, walk: Walk, index: number): UiBlock | null {
  if (!isPlainObject(raw)) {
    walk.issues.push({ id: `block-${index}`, reason: "a block must be an object" });
    return null;
  }
  if (raw.kind === "text") {
    if (typeof raw.markdown === "string") return { kind: "text", markdown: raw.markdown };
    walk.issues.push({ id: `block-${index}`, reason: "a text block needs markdown" });
    return null;
  }
  if (raw.kind === "ui" && raw.root !== undefined)
    return { kind: "ui", root: validateNode(raw.root, walk, null) };
  walk.issues.push({
    id: `block-${index}`,
    reason: 'a block is {"kind":"text",…} or {"kind":"ui","root":…}',
  });
  return null;
}

/**
 * Check `raw` (already JSON-parsed, untrusted) and return the normalised document with the
 * problems found, or the reason it cannot be used at all (limits, no blocks).
 */
export function validateDocument(raw: unknown, limits: UiLimits = UI_LIMITS): ValidationResult {
  try {
    const checked = checkLimits(raw, limits);
    if (!checked.ok) return { ok: false, reason: `The answer's UI is too large: ${checked.reason}.` };
    if (!isPlainObject(raw) || !Array.isArray(raw.blocks))
      return { ok: false, reason: 'The answer is not a UI document ({"version":1,"blocks":[…]}).' };
    if (raw.version !== undefined && raw.version !== CATALOG_VERSION)
      return {
        ok: false,
        reason: `The answer uses UI catalog version ${short(JSON.stringify(raw.version) ?? "?", 20)}; this app reads ${CATALOG_VERSION}.`,
      };
    const walk: Walk = { ids: new Set(), issues: [], nodes: 0, generated: 0 };
    const blocks: UiBlock[] = [];
    for (const [i, b] of raw.blocks.slice(0, PROP_LIMITS.blocks).entries()) {
      const block = validateBlock(b, walk, i);
      if (block) blocks.push(block);
    }
    if (raw.blocks.length > PROP_LIMITS.blocks)
      walk.issues.push({ id: "blocks", reason: `only the first ${PROP_LIMITS.blocks} blocks are shown` });
    return {
      ok: true,
      document: { version: CATALOG_VERSION, blocks: positiveZeros(blocks) },
      issues: walk.issues,
      nodes: walk.nodes,
    };
  } catch (err) {
    // Defensive: nothing above should throw, but an answer must never take core down.
    return {
      ok: false,
      reason: `The answer's UI could not be checked: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/**
 * The same data with every -0 as 0: JSON has no negative zero, so a stored document read back
 * must equal the one shown. Depth is bounded by the limits checked before.
 */
function positiveZeros<T>(value: T): T {
  if (typeof value === "number") return (Object.is(value, -0) ? 0 : value) as T;
  if (Array.isArray(value)) return value.map(positiveZeros) as T;
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, positiveZeros(v)])) as T;
  return value;
}

/** Parse JSON text and validate it; the text is depth-checked before JSON.parse. */
export function parseDocument(text: string, limits: UiLimits = UI_LIMITS): ValidationResult {
  if (text.length > limits.maxTotalSize * 2) return { ok: false, reason: "The answer's UI is too large." };
  if (jsonDepth(text) > limits.maxJsonDepth)
    return {
      ok: false,
      reason: `The answer's UI is too large: it is nested more than ${limits.maxJsonDepth} levels deep.`,
    };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      reason: `The answer is not valid JSON (${err instanceof Error ? err.message : String(err)}).`,
    };
  }
  return validateDocument(raw, limits);
}

/** Every node of a document, depth first (iterative). */
export function* walkNodes(doc: UiDocument): Generator<UiNode> {
  const stack: UiNode[] = [];
  for (let i = doc.blocks.length - 1; i >= 0; i--) {
    const b = doc.blocks[i]!;
    if (b.kind === "ui") stack.push(b.root);
  }
  while (stack.length > 0) {
    const node = stack.pop()!;
    yield node;
    const kids = node.children ?? [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
}

/** The node with `id`, or null. */
export function findNode(doc: UiDocument, id: string): UiNode | null {
  for (const node of walkNodes(doc)) if (node.id === id) return node;
  return null;
}
