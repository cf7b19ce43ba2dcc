/**
 * An incremental JSON parser for UI answers as they stream. Text is pushed in pieces; the value
 * built so far can be read at any time, and every object/array knows whether its closing
 * bracket has arrived. A UI node is shown as soon as its subtree is complete (`completedPart`).
 *
 * Tolerant of incomplete input (that is the point) and of garbage: the first syntax error stops
 * parsing and keeps what was complete before it. Iterative (an explicit stack, never recursion),
 * depth-capped, and keys are defined as own properties, so "__proto__" never reaches a prototype.
 */
import { CONTAINERS, isComponentType } from "./catalog";
import { UI_LIMITS } from "./limits";

type Container = Record<string, unknown> | unknown[];

interface ObjectFrame {
  kind: "object";
  value: Record<string, unknown>;
  state: "keyOrEnd" | "key" | "colon" | "value" | "commaOrEnd";
  key: string;
}
interface ArrayFrame {
  kind: "array";
  value: unknown[];
  state: "valueOrEnd" | "value" | "commaOrEnd";
}
type Frame = ObjectFrame | ArrayFrame;

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  // Never `obj[key] = value`: with key "__proto__" that would replace the prototype.
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export class PartialJson {
  private readonly stack: Frame[] = [];
  private readonly complete = new WeakSet<object>();
  private rootValue: unknown = undefined;
  private hasRoot = false;
  private finished = false;
  private failure: string | null = null;
  /** A string or literal/number being read. */
  private token:
    { kind: "string"; text: string; escape: string | null } | { kind: "atom"; text: string } | null = null;
  private consumed = 0;

  constructor(private readonly maxDepth: number = UI_LIMITS.maxJsonDepth) {}

  /** The value so far (undefined before the first value starts). */
  get root(): unknown {
    return this.rootValue;
  }

  /** The top-level value is complete. */
  get done(): boolean {
    return this.finished;
  }

  /** Why parsing stopped early, or null. */
  get error(): string | null {
    return this.failure;
  }

  /** Characters consumed so far. */
  get length(): number {
    return this.consumed;
  }

  /** Whether `value` (an object or array from `root`) has been closed. Scalars always are. */
  isComplete(value: unknown): boolean {
    if (typeof value !== "object" || value === null) return true;
    return this.complete.has(value);
  }

  /** Feed the next piece of text. Ignored after an error or after the value ended (trailing text). */
  push(text: string): void {
    for (let i = 0; i < text.length; i++) {
      if (this.failure !== null) return;
      this.consumed++;
      this.step(text[i]!);
    }
  }

  private fail(reason: string): void {
    this.failure = `${reason} at character ${this.consumed}`;
  }

  private step(c: string): void {
    const token = this.token;
    if (token?.kind === "string") return this.stringChar(token, c);
    if (token?.kind === "atom") {
      if (/[-+0-9.eEtrufalsn]/.test(c)) {
        token.text += c;
        if (token.text.length > 64) this.fail("a number or literal is too long");
        return;
      }
      this.token = null;
      this.endAtom(token.text);
      if (this.failure !== null) return;
    }
    if (WS.has(c)) return;
    if (this.finished) return; // trailing text after the document: ignored
    const top = this.stack[this.stack.length - 1];
    if (c === "}" || c === "]") return this.close(c, top);
    if (c === ",") {
      if (top?.state !== "commaOrEnd") return this.fail("unexpected ,");
      top.state = top.kind === "object" ? "key" : "value";
      return;
    }
    if (c === ":") {
      if (top?.kind !== "object" || top.state !== "colon") return this.fail("unexpected :");
      top.state = "value";
      return;
    }
    if (top?.kind === "object" && (top.state === "keyOrEnd" || top.state === "key")) {
      if (c !== '"') return this.fail("expected a key");
      this.token = { kind: "string", text: "", escape: null };
      return;
    }
    if (top && top.state === "commaOrEnd") return this.fail(`unexpected ${c}`);
    if (top?.kind === "object" && top.state === "colon") return this.fail("expected :");
    this.startValue(c);
  }

  private startValue(c: string): void {
    if (c === "{" || c === "[") {
      if (this.stack.length >= this.maxDepth) return this.fail(`nested more than ${this.maxDepth} levels`);
      const value: Container = c === "{" ? {} : [];
      this.attach(value);
      this.stack.push(
        c === "{"
          ? { kind: "object", value: value as Record<string, unknown>, state: "keyOrEnd", key: "" }
          : { kind: "array", value: value as unknown[], state: "valueOrEnd" },
      );
      return;
    }
    if (c === '"') {
      this.token = { kind: "string", text: "", escape: null };
      return;
    }
    if (/[-0-9tfn]/.test(c)) {
      this.token = { kind: "atom", text: c };
      return;
    }
    this.fail(`unexpected ${JSON.stringify(c)}`);
  }

  private stringChar(token: { kind: "string"; text: string; escape: string | null }, c: string): void {
    if (token.escape !== null) {
      if (token.escape === "") {
        if (c === "u") {
          token.escape = "u";
          return;
        }
        const mapped = ESCAPES[c];
        if (mapped === undefined) return this.fail("bad escape");
        token.text += mapped;
        token.escape = null;
        return;
      }
      token.escape += c;
      if (token.escape.length === 5) {
        const hex = token.escape.slice(1);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return this.fail("bad \\u escape");
        token.text += String.fromCharCode(parseInt(hex, 16));
        token.escape = null;
      }
      return;
    }
    if (c === "\\") {
      token.escape = "";
      return;
    }
    if (c === '"') {
      this.token = null;
      const top = this.stack[this.stack.length - 1];
      if (top?.kind === "object" && (top.state === "keyOrEnd" || top.state === "key")) {
        top.key = token.text;
        top.state = "colon";
        return;
      }
      this.attach(token.text);
      return;
    }
    if (c < " ") return this.fail("control character in a string");
    token.text += c;
  }

  private endAtom(text: string): void {
    let value: unknown;
    if (text === "true") value = true;
    else if (text === "false") value = false;
    else if (text === "null") value = null;
    else if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/.test(text)) value = Number(text);
    else return this.fail(`bad value ${JSON.stringify(text.slice(0, 20))}`);
    this.attach(value);
  }

  /** Put a value (scalar now, container before its contents) into its parent. */
  private attach(value: unknown): void {
    const top = this.stack[this.stack.length - 1];
    const isContainer = typeof value === "object" && value !== null;
    if (!top) {
      this.rootValue = value;
      this.hasRoot = true;
      if (!isContainer) this.finished = true;
      return;
    }
    if (top.kind === "object") {
      define(top.value, top.key, value);
      top.state = "commaOrEnd";
    } else {
      top.value.push(value);
      top.state = "commaOrEnd";
    }
  }

  private close(c: "}" | "]", top: Frame | undefined): void {
    if (!top) return this.fail(`unexpected ${c}`);
    const ok =
      (c === "}" && top.kind === "object" && (top.state === "keyOrEnd" || top.state === "commaOrEnd")) ||
      (c === "]" && top.kind === "array" && (top.state === "valueOrEnd" || top.state === "commaOrEnd"));
    if (!ok) return this.fail(`unexpected ${c}`);
    this.stack.pop();
    this.complete.add(top.value);
    if (this.stack.length === 0 && this.hasRoot) this.finished = true;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The part of a streaming UI document that can be shown: complete values as they are; of an
 * open array its complete items; of an open node, only a container whose type, id and props are
 * complete (shown with the children complete so far). Open text blocks and open leaf nodes are
 * left out until they close. The result is plain data for validateDocument.
 */
export function completedPart(parser: PartialJson): unknown {
  const root = parser.root;
  if (!isObject(root)) return undefined;
  const blocks = root.blocks;
  const out: Record<string, unknown> = {};
  if (root.version !== undefined) out.version = root.version;
  if (!Array.isArray(blocks)) return { ...out, blocks: [] };
  const kept: unknown[] = [];
  for (const block of blocks) {
    if (parser.isComplete(block)) {
      kept.push(block);
      continue;
    }
    if (!isObject(block) || block.kind !== "ui") continue;
    const node = openNode(parser, block.root);
    if (node !== undefined) kept.push({ kind: "ui", root: node });
  }
  return { ...out, blocks: kept };
}

/** Complete node as is; open container with complete type/id/props and its ready children. */
function openNode(parser: PartialJson, raw: unknown): unknown {
  // Iterative over the open path: only the last child of each open container can be open.
  if (parser.isComplete(raw)) return raw;
  const path: { shell: Record<string, unknown>; kids: unknown[] }[] = [];
  let current: unknown = raw;
  while (isObject(current) && !parser.isComplete(current)) {
    const { type, id, props, children } = current;
    const shellReady =
      isComponentType(type) &&
      CONTAINERS.has(type) &&
      typeof id === "string" &&
      isObject(props) &&
      parser.isComplete(props);
    if (!shellReady) break;
    const kids: unknown[] = [];
    let next: unknown = undefined;
    if (Array.isArray(children)) {
      for (const child of children) {
        if (parser.isComplete(child)) kids.push(child);
        else next = child;
      }
    }
    path.push({ shell: { type, id, props, children: kids }, kids });
    current = next;
  }
  if (path.length === 0) return undefined;
  // Complete the chain: each open child shell goes at the end of its parent's children.
  for (let i = path.length - 1; i > 0; i--) path[i - 1]!.kids.push(path[i]!.shell);
  return path[0]!.shell;
}
