/**
 * The routing a user's pin on the Agent gives (the Agent alone, full scale), for runs that drive
 * the agent loop (`AgentTurns.planFor`) directly instead of through chat.send: the episodes and
 * the agent benches. `version` names the adapter version the run loaded ("live", "bench").
 */
import type { RoutingInfo } from "../../../electron/api";

export function pinnedAgentRouting(version: string, reason: string): RoutingInfo {
  return {
    mode: "pinned",
    adapters: [{ id: "agent", version, scale: 1 }],
    confidence: 1,
    reason,
    latencyMs: 0,
  };
}
