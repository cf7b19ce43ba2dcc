/**
 * The tools of one agent turn as the engine sees them: every usable tool from the catalog under
 * a function name that is unique across servers (the tool's own name when no other server has
 * it, else prefixed with its server), and the way back from a name the model called.
 */
import type { ToolDefinition } from "../engine/types";
import { schemaProblem } from "./argument-check";
import type { CallableTool } from "./tool-types";

const MAX_NAME = 64;

/** A function name the engine accepts: ^[a-zA-Z0-9_-]{1,64}$. */
function functionName(raw: string): string {
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_NAME);
  return clean.length > 0 ? clean : "tool";
}

export class AgentToolset {
  readonly definitions: ToolDefinition[] = [];
  private readonly byName = new Map<string, CallableTool>();

  /** `log` hears about tools left out (a schema no grammar can be made from). */
  constructor(tools: readonly CallableTool[], log?: (message: string) => void) {
    const usable = tools.filter((t) => {
      const problem = schemaProblem(t.inputSchema);
      if (problem) log?.(`tool ${t.server}/${t.name} left out: ${problem}`);
      return problem === null;
    });
    const counts = new Map<string, number>();
    for (const t of usable) counts.set(functionName(t.name), (counts.get(functionName(t.name)) ?? 0) + 1);
    for (const t of usable) {
      const own = functionName(t.name);
      const wanted = counts.get(own) === 1 ? own : functionName(`${t.server}_${t.name}`);
      let name = wanted;
      // Still taken (names that clean to the same): number it, within the length limit.
      for (let n = 2; this.byName.has(name); n++) {
        const suffix = `_${n}`;
        name = `${wanted.slice(0, MAX_NAME - suffix.length)}${suffix}`;
      }
      this.byName.set(name, t);
      this.definitions.push({ name, description: t.description, parameters: t.inputSchema });
    }
  }

  get size(): number {
    return this.definitions.length;
  }

  /** The tool behind a function name the model called; undefined for a name it was not given. */
  resolve(name: string): CallableTool | undefined {
    return this.byName.get(name);
  }
}
