import type { z } from "zod";
import { Message } from "./schemas";

/** The fields of Message that have a default in its schema. */
const Defaulted = Message.pick({
  routing: true,
  rating: true,
  corrected: true,
  memoriesUsed: true,
  context: true,
  steps: true,
});
export type MessageDefaults = z.output<typeof Defaulted>;

/**
 * What a new message starts with, from the Message schema's own defaults (one place: the
 * message store and the renderer's streaming placeholder both start from it). Fresh each call.
 */
export function messageDefaults(): MessageDefaults {
  return Defaulted.parse({});
}
