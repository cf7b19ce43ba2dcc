/**
 * A UI answer while it streams: the raw JSON so far is parsed incrementally (only the new text
 * each time), the complete part validated, and nodes that did not change keep their previous
 * objects, so React re-renders only what is new. Plain class, one per streaming message.
 */
import {
  CATALOG_VERSION,
  PartialJson,
  completedPart,
  validateDocument,
  type UiDocument,
  type UiNode,
} from "../../../electron/api/genui";

const EMPTY: UiDocument = { version: CATALOG_VERSION, blocks: [] };

export class StreamingDocument {
  private parser = new PartialJson();
  private fed = "";
  private previous = new Map<string, { json: string; node: UiNode }>();
  private current: UiDocument = EMPTY;

  /** The document for `content` (the raw JSON streamed so far). */
  update(content: string): UiDocument {
    if (content === this.fed) return this.current;
    if (!content.startsWith(this.fed)) {
      // Not a continuation (replaced text): start over.
      this.parser = new PartialJson();
      this.fed = "";
    }
    this.parser.push(content.slice(this.fed.length));
    this.fed = content;
    const raw = this.parser.done ? this.parser.root : completedPart(this.parser);
    const checked = validateDocument(raw);
    if (!checked.ok) return this.current;
    const seen = new Map<string, { json: string; node: UiNode }>();
    const blocks = checked.document.blocks.map((b) =>
      b.kind === "ui" ? { kind: "ui" as const, root: this.reuse(b.root, seen) } : b,
    );
    this.previous = seen;
    this.current = { version: CATALOG_VERSION, blocks };
    return this.current;
  }

  /** `node`, or the identical node object of the last update (children first). */
  private reuse(node: UiNode, seen: Map<string, { json: string; node: UiNode }>): UiNode {
    const children = node.children?.map((c) => this.reuse(c, seen));
    const fresh = children ? ({ ...node, children } as UiNode) : node;
    const json = JSON.stringify(fresh);
    const before = this.previous.get(node.id);
    const kept = before && before.json === json ? before.node : fresh;
    seen.set(node.id, { json, node: kept });
    return kept;
  }
}
