/**
 * The child's side of node-child.ts: how a script started by either implementation talks to
 * its parent (common/parent-channel.ts, shared with the engine).
 */
import { detectParentChannel, type ParentChannel } from "../../../common/parent-channel";

export type ParentPort = ParentChannel;

/** The channel to the parent, or null when the script was started without one. */
export function parentPort(proc: NodeJS.Process = process): ParentPort | null {
  return detectParentChannel(proc);
}
