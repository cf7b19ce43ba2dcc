import type { BuiltinDomain } from "../../common/domains";
import { gv, writeGguf, type GgufWriteSpec } from "./writer";
import {
  normedConstant,
  TINY_MODEL_ARCHITECTURE,
  TINY_MODEL_SHAPES,
  vocabularySize,
  type TinyModelShape,
  type TinyModelSize,
} from "./tiny-model";
import { qwenAdapterSpec, qwenAttentionLora, qwenOutputLora, type QwenArchitecture } from "./tiny-qwen";

/**
 * The four demo specialist adapters. Each is a rank-1 LoRA on output.weight: A reads the
 * constant residual dimension (see tiny-model.ts), B adds `ADAPTER_LOGIT_BOOST` to the logit
 * of its marker character. At scale 1 that outweighs the base model's preferences, so greedy
 * output is the marker repeated ("cccc", "{{{{", "aaaa", "uuuu"); at scale s the boost is
 * s·ADAPTER_LOGIT_BOOST, so blends and partial scales land in between.
 */

/** The demo has one adapter per built-in domain, named after it (common/domains.ts). */
export type DemoAdapterId = BuiltinDomain;

export interface DemoAdapter {
  readonly id: DemoAdapterId;
  readonly name: string;
  readonly domain: string;
  readonly description: string;
  /** The character greedy decoding repeats with this adapter at scale 1. */
  readonly marker: string;
  readonly defaultScale: number;
  readonly routingExamples: readonly string[];
}

export const DEMO_ADAPTERS: readonly DemoAdapter[] = [
  {
    id: "chat",
    name: "Chat",
    domain: "chat",
    description: "Everyday conversation, questions and advice (demo adapter: writes 'c').",
    marker: "c",
    defaultScale: 1,
    routingExamples: [
      "How are you today?",
      "Tell me a fun fact about octopuses.",
      "What should I cook for dinner tonight?",
      "Can you recommend a good book?",
      "Explain why the sky is blue.",
      "Write a short birthday message for my sister.",
    ],
  },
  {
    id: "coding",
    name: "Coding",
    domain: "coding",
    description: "Writing, explaining and fixing code (demo adapter: writes '{').",
    marker: "{",
    defaultScale: 1,
    routingExamples: [
      "Write a TypeScript function that reverses a string.",
      "Why does this Python loop never end?",
      "Fix the null pointer exception in my Java code.",
      "How do I read a file line by line in Node.js?",
      "Refactor this SQL query to use a join.",
      "What does the `async` keyword do in JavaScript?",
    ],
  },
  {
    id: "agent",
    name: "Agent",
    domain: "agent",
    description: "Planning multi-step tasks and calling tools (demo adapter: writes 'a').",
    marker: "a",
    defaultScale: 1,
    routingExamples: [
      "Book a table for two at 7pm and add it to my calendar.",
      "Plan the steps to migrate my blog to a new host.",
      "Search my notes for the meeting with Dana and summarize it.",
      "Every Monday, remind me to send the weekly report.",
      "Find the cheapest flight to Lisbon next month and draft an email.",
    ],
  },
  {
    id: "ui",
    name: "UI",
    domain: "ui",
    description: "Answers as interactive components: forms, tables, charts (demo adapter: writes 'u').",
    marker: "u",
    defaultScale: 1,
    routingExamples: [
      "Show me a form to sign up for the newsletter.",
      "Make a table comparing these three laptops.",
      "Give me a checklist for packing for a trip.",
      "Build a slider to pick a budget between 100 and 1000.",
      "Show my monthly expenses as a chart.",
    ],
  },
];

/**
 * Small talk (greetings, thanks, farewells, check-ins) for the demo Chat's routing examples,
 * added by the demo build only (scripts/build-demo.ts), not to the test fixtures' adapters: without
 * them the learned router blended "Hello there" into Agent (issue 29). Measured on
 * testing/router/small-talk.contract.json, written apart from these.
 */
export const DEMO_CHAT_SMALL_TALK: readonly string[] = [
  "Hi!",
  "Hello.",
  "Hope you're well.",
  "Good morning!",
  "Howdy!",
  "Hi Macaron, nice to meet you.",
  "Hey there, friend.",
  "Greetings!",
  "Thanks!",
  "Thank you so much, that helped.",
  "Much obliged.",
  "Thanks a bunch",
  "Catch you later.",
  "See you tomorrow!",
  "Sleep well!",
  "Talk to you later",
  "How's your day going?",
  "What's new with you?",
  "Everything good on your end?",
  "Haha, that's hilarious.",
  "You're awesome.",
  "Nice one!",
  "Okay, cool.",
  "What a week it's been.",
  "I just got back from the gym.",
  "It's so hot today.",
];

/** Logit added to the marker token at scale 1; far above the base model's logit spread. */
export const ADAPTER_LOGIT_BOOST = 60;

export function demoAdapter(id: DemoAdapterId): DemoAdapter {
  const adapter = DEMO_ADAPTERS.find((a) => a.id === id);
  if (!adapter) throw new Error(`unknown demo adapter "${id}"`);
  return adapter;
}

/** An output-layer LoRA for a model of `shape` boosting the given token ids. */
function outputLoraSpec(
  shape: TinyModelShape,
  name: string,
  boosts: ReadonlyMap<number, number>,
): GgufWriteSpec {
  const E = shape.embedding;
  const V = vocabularySize();
  const a = new Float32Array(E);
  a[0] = 1 / normedConstant(shape);
  const b = new Float32Array(V);
  for (const [token, boost] of boosts) b[token] = boost;
  return {
    metadata: {
      "general.architecture": gv.str(TINY_MODEL_ARCHITECTURE),
      "general.type": gv.str("adapter"),
      "general.name": gv.str(name),
      "adapter.type": gv.str("lora"),
      // alpha = rank, so llama.cpp's alpha/rank factor is 1 and the user scale is the scale.
      "adapter.lora.alpha": gv.f32(1),
      "macaron.demo": gv.bool(true),
    },
    tensors: [
      { name: "output.weight.lora_a", dims: [E, 1], type: "F32", data: a },
      { name: "output.weight.lora_b", dims: [1, V], type: "F32", data: b },
    ],
  };
}

/** The spec of demo adapter `id` for the base model of `size`. */
export function demoAdapterSpec(id: DemoAdapterId, size: TinyModelSize = "tiny"): GgufWriteSpec {
  const adapter = demoAdapter(id);
  // Byte tokenizer: the marker's byte value is its token id.
  const token = adapter.marker.charCodeAt(0);
  return outputLoraSpec(
    TINY_MODEL_SHAPES[size],
    `Macaron ${adapter.name} adapter (demo)`,
    new Map([[token, ADAPTER_LOGIT_BOOST]]),
  );
}

/** The base architectures the fixtures come in: the llama demo and the Tall base's qwen family. */
export type FixtureArchitecture = "llama" | QwenArchitecture;

/**
 * Demo adapter `id` for the tiny base of `architecture`. On the qwen bases it is the same
 * output-layer marker plus a rank-1 LoRA on every layer's attn_q and attn_v (seeded per
 * adapter), so the adapters exercise attention LoRA too; the marker still decides greedy output.
 */
export function demoAdapterSpecFor(id: DemoAdapterId, architecture: FixtureArchitecture): GgufWriteSpec {
  if (architecture === "llama") return demoAdapterSpec(id);
  const adapter = demoAdapter(id);
  const token = adapter.marker.charCodeAt(0);
  return qwenAdapterSpec(architecture, `Macaron ${adapter.name} adapter (demo, ${architecture})`, [
    ...qwenAttentionLora(architecture, id, 1, 0.5),
    ...qwenOutputLora(architecture, new Map([[token, ADAPTER_LOGIT_BOOST]])),
  ]);
}

/**
 * An adapter built for a different base (embedding size 32 larger than the `size` model's),
 * for tests of the "adapter does not fit this model" error path.
 */
export function wrongBaseAdapterSpec(size: TinyModelSize = "tiny"): GgufWriteSpec {
  const shape = TINY_MODEL_SHAPES[size];
  const other: TinyModelShape = { ...shape, embedding: shape.embedding + 32 };
  return outputLoraSpec(
    other,
    "Macaron adapter for another base (test)",
    new Map([[0x7a, ADAPTER_LOGIT_BOOST]]),
  );
}

/** Writes the wrong-base test adapter to `path`. */
export async function writeWrongBaseAdapter(path: string, size: TinyModelSize = "tiny"): Promise<string> {
  await writeGguf(path, wrongBaseAdapterSpec(size));
  return path;
}
