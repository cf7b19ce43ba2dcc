/**
 * Resource limits on a raw (parsed, untrusted) UI document, checked BEFORE any schema runs:
 * zod and ajv recurse, and very deep input makes them throw RangeError (stack overflow), so a
 * cheap iterative walk refuses such input first. Everything is counted in one pass with an
 * explicit stack; nothing here recurses.
 */

export const UI_LIMITS = {
  /** Nesting of arrays/objects anywhere in the document. */
  maxJsonDepth: 48,
  /** Nesting of UI nodes (a node inside `children` of another). */
  maxNodeDepth: 16,
  /** UI nodes in the whole document. */
  maxNodes: 2000,
  /** Characters of one string (keys included). */
  maxStringLength: 20_000,
  /** Rough size: characters of every string plus one per value. */
  maxTotalSize: 2_000_000,
  /** Elements of one array / keys of one object. */
  maxArrayLength: 2000,
  maxObjectKeys: 64,
} as const;

export type UiLimits = typeof UI_LIMITS;

export type LimitResult = { ok: true; nodes: number; size: number } | { ok: false; reason: string };

/** Keys that could reach an object's prototype if a later merge or spread copied them. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** An array, or an object whose prototype is Object.prototype or null. */
function isPlainData(value: object): boolean {
  if (Array.isArray(value)) return Object.getPrototypeOf(value) === Array.prototype;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

interface Frame {
  value: unknown;
  depth: number;
  /** Node depth when `value` is a UI node (an object inside `root` or `children`). */
  nodeDepth: number;
  isNode: boolean;
}

/**
 * Walk `raw` iteratively and report the first limit it breaks. Prototype keys are not refused
 * here (a single bad node should not sink the answer); per-node validation rejects them.
 */
export function checkLimits(raw: unknown, limits: UiLimits = UI_LIMITS): LimitResult {
  const stack: Frame[] = [{ value: raw, depth: 0, nodeDepth: 0, isNode: false }];
  let nodes = 0;
  let size = 0;
  while (stack.length > 0) {
    const { value, depth, nodeDepth, isNode } = stack.pop()!;
    size += 1;
    if (typeof value === "string") {
      if (value.length > limits.maxStringLength)
        return { ok: false, reason: `a text is longer than ${limits.maxStringLength} characters` };
      size += value.length;
    } else if (typeof value === "object" && value !== null) {
      if (depth >= limits.maxJsonDepth)
        return { ok: false, reason: `it is nested more than ${limits.maxJsonDepth} levels deep` };
      // Only data as JSON.parse or a structured clone makes it: an object that inherits from
      // another one has keys this walk (own keys) would not see and a schema would read.
      if (!isPlainData(value)) return { ok: false, reason: "it is not plain data" };
      if (isNode) {
        nodes++;
        if (nodes > limits.maxNodes)
          return { ok: false, reason: `it has more than ${limits.maxNodes} components` };
        if (nodeDepth > limits.maxNodeDepth)
          return { ok: false, reason: `components are nested more than ${limits.maxNodeDepth} deep` };
      }
      if (Array.isArray(value)) {
        if (value.length > limits.maxArrayLength)
          return { ok: false, reason: `a list has more than ${limits.maxArrayLength} items` };
        for (let i = value.length - 1; i >= 0; i--) {
          stack.push({ value: value[i], depth: depth + 1, nodeDepth, isNode: false });
        }
      } else {
        const keys = Object.keys(value);
        if (keys.length > limits.maxObjectKeys)
          return { ok: false, reason: `an object has more than ${limits.maxObjectKeys} keys` };
        for (const key of keys) {
          if (key.length > limits.maxStringLength)
            return { ok: false, reason: `a key is longer than ${limits.maxStringLength} characters` };
          size += key.length;
          const child = (value as Record<string, unknown>)[key];
          if (
            (key === "root" || (isNode && key === "children")) &&
            typeof child === "object" &&
            child !== null
          ) {
            // `root` holds one node; a node's `children` holds nodes one level deeper.
            const next = key === "root" ? 1 : nodeDepth + 1;
            const items = Array.isArray(child) ? child : [child];
            if (Array.isArray(child)) {
              if (child.length > limits.maxArrayLength)
                return { ok: false, reason: `a list has more than ${limits.maxArrayLength} items` };
              size += 1;
            }
            const childDepth = Array.isArray(child) ? depth + 2 : depth + 1;
            for (let i = items.length - 1; i >= 0; i--) {
              stack.push({ value: items[i], depth: childDepth, nodeDepth: next, isNode: true });
            }
          } else {
            stack.push({ value: child, depth: depth + 1, nodeDepth, isNode: false });
          }
        }
      }
    }
    if (size > limits.maxTotalSize)
      return { ok: false, reason: `it is larger than ${limits.maxTotalSize} characters` };
  }
  return { ok: true, nodes, size };
}
