/**
 * The tool definitions a trajectory carries: for each tool its steps called, the function name,
 * description and parameters the model was given, as the agent loop offers them (AgentToolset:
 * the tool's own name, or prefixed with its server when another server has one like it). Read
 * from the catalog when the feedback is recorded; a tool gone since then keeps only its name.
 */
import type { ToolDefinitionWire } from "../../../common/feedback-protocol";
import type { ToolStep } from "../../api";
import { AgentToolset } from "../tools/agent-toolset";
import type { CallableTool } from "../tools/tool-types";

export function toolDefinitionsFrom(
  tools: () => readonly CallableTool[],
): (steps: readonly ToolStep[]) => ToolDefinitionWire[] {
  return (steps) => {
    const toolset = new AgentToolset(tools());
    const out: ToolDefinitionWire[] = [];
    const seen = new Set<string>();
    for (const step of steps) {
      const key = `${step.server}\u0000${step.tool}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const def = toolset.definitions.find((d) => {
        const t = toolset.resolve(d.name);
        return t?.server === step.server && t.name === step.tool;
      });
      out.push({
        name: def?.name ?? step.tool,
        server: step.server,
        tool: step.tool,
        ...(def?.description ? { description: def.description } : {}),
        ...(def?.parameters ? { parameters: def.parameters } : {}),
      });
    }
    return out;
  };
}
