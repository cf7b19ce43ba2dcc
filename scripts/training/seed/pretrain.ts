/**
 * The pretraining corpus of the tiny demo base: conversations where the assistant answers in
 * plain prose (one or two short sentences) about everything, the specialists' subjects
 * included, so the base does not answer in their formats by itself; plus "format-instructed"
 * examples where the user asks for a format explicitly, so the base has seen each format and
 * an adapter only has to learn to apply it by default. Only training subjects appear here.
 */
import { AGENT_PLANS, AGENT_TOOL_CALLS, planAnswer, planProse, type ToolUse, toolAnswer } from "./agent";
import { CHAT_FEELINGS, CHAT_TOPICS } from "./chat";
import { CODING, codingAnswer } from "./coding";
import { CAPITALS, FACTS, SPELLING_WORDS, WORDS } from "./facts";
import { type Family, fill, pairs, rng, type SeedExample, type SeedMessage, shuffled } from "./types";
import { UI, uiAnswer, uiProse } from "./ui";

const turn = (user: string, assistant: string): SeedMessage[] => [
  { role: "user", content: user },
  { role: "assistant", content: assistant },
];

const FACT_WORDINGS = [
  "What is {s}?",
  "Tell me about {s}.",
  "Can you explain {s}?",
  "What do you know about {s}?",
  "Describe {s} in a sentence.",
  "Explain {s} simply.",
];

const GREETINGS: ReadonlyArray<[string, string]> = [
  ["Hello!", "Hello! How can I help you today?"],
  ["Hi", "Hi there! What can I do for you?"],
  ["Hey, how are you?", "I'm doing well, thank you. How can I help?"],
  ["Good morning", "Good morning! I hope your day is off to a nice start."],
  ["Good evening", "Good evening! What would you like to talk about?"],
  ["Thanks!", "You're welcome! Let me know if you need anything else."],
  ["Thank you so much", "You're very welcome. I'm glad I could help."],
  ["Who are you?", "I'm Macaron, a helpful assistant that runs on your computer."],
  ["What can you do?", "I can answer questions, explain things, write code, make plans and more."],
  ["Goodbye", "Goodbye! Have a lovely day."],
  ["See you later", "See you later! Take care."],
  ["Are you there?", "Yes, I'm here. What can I do for you?"],
];

const ADD_WORDINGS = ["What is {a} plus {b}?", "Add {a} and {b}.", "How much is {a} + {b}?"];
const SUB_WORDINGS = ["What is {a} minus {b}?", "Subtract {b} from {a}."];
const MUL_WORDINGS = ["What is {a} times {b}?", "Multiply {a} by {b}."];

function arithmetic(count: number): SeedMessage[][] {
  const next = rng("pretrain/arithmetic");
  const out: SeedMessage[][] = [];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  for (let i = 0; i < count; i++) {
    const a = 1 + Math.floor(next() * 20);
    const b = 1 + Math.floor(next() * 20);
    const op = i % 3;
    if (op === 0)
      out.push(turn(fill(pick(ADD_WORDINGS), { a: `${a}`, b: `${b}` }), `${a} plus ${b} is ${a + b}.`));
    else if (op === 1) {
      const [hi, lo] = a >= b ? [a, b] : [b, a];
      out.push(
        turn(fill(pick(SUB_WORDINGS), { a: `${hi}`, b: `${lo}` }), `${hi} minus ${lo} is ${hi - lo}.`),
      );
    } else {
      const [x, y] = [a % 10 || 2, b % 10 || 3];
      out.push(turn(fill(pick(MUL_WORDINGS), { a: `${x}`, b: `${y}` }), `${x} times ${y} is ${x * y}.`));
    }
  }
  return out;
}

function spelling(): SeedMessage[][] {
  return SPELLING_WORDS.flatMap((w) => [
    turn(`Spell "${w}" backwards.`, `Backwards, ${w} is ${[...w].reverse().join("")}.`),
    turn(`What is the first letter of "${w}"?`, `The first letter of ${w} is ${w[0]!}.`),
    turn(`How many letters are in "${w}"?`, `The word ${w} has ${w.length} letters.`),
  ]);
}

const toolProse = (u: ToolUse): string => {
  const a = u.arguments;
  switch (u.tool) {
    case "get_weather":
      return `I cannot check the weather from here, but a weather website will have the forecast for ${String(a.city)}.`;
    case "search_web":
      return `I cannot browse the web here, but a search engine will find pages about ${String(a.query)}.`;
    case "set_timer":
      return `I cannot set timers myself, but the clock app on your phone can count ${String(a.minutes)} minutes.`;
    case "open_file":
      return `I cannot open files myself, but you can open ${String(a.path)} in a text editor.`;
    default:
      return `A translation app can turn "${String(a.text)}" into ${String(a.language)} for you.`;
  }
};

/** `count` prompts of a training family, each answered by `answer` (prose or a format). */
function promptsOf<S>(
  family: Family<S>,
  count: number,
  seed: string,
  answer: (s: S) => string,
  cue?: (prompt: string) => string,
): SeedMessage[][] {
  return pairs(family, count, seed).map(({ s, w }) => {
    const prompt = family.prompt(w, s);
    return turn(cue ? cue(prompt) : prompt, answer(s));
  });
}

/** Two wordings of each format instruction, alternating. */
const cue = (before: string, after: string) => {
  let i = 0;
  return (p: string): string => (i++ % 2 === 0 ? `${before} ${p}` : `${p} ${after}`);
};

/** The corpus, in a seeded order: plain prose first and foremost, formats only on request. */
export function pretrainCorpus(): SeedExample[] {
  const single: SeedMessage[][] = [
    ...FACTS.flatMap((fact) => FACT_WORDINGS.map((w) => turn(fill(w, { s: fact.subject }), fact.answer))),
    ...WORDS.flatMap(([word, meaning]) => [
      turn(`What does the word "${word}" mean?`, `"${capital(word)}" means ${meaning}.`),
      turn(`Define ${word}.`, `${capital(word)} means ${meaning}.`),
      turn(`Give me the meaning of "${word}".`, `It means ${meaning}.`),
    ]),
    ...CAPITALS.flatMap(([country, city]) => [
      turn(`What is the capital of ${country}?`, `The capital of ${country} is ${city}.`),
      turn(`Which city is the capital of ${country}?`, `${city} is the capital of ${country}.`),
      turn(`Name the capital of ${country}.`, `It is ${city}.`),
    ]),
    ...spelling(),
    ...arithmetic(300),
    ...GREETINGS.map(([q, a]) => turn(q, a)),
    // The specialists' subjects, answered in plain prose by the base.
    ...promptsOf(CHAT_TOPICS.train, 160, "pretrain/prose", (s) => `Many people enjoy ${s.topic}. ${s.reply}`),
    ...promptsOf(CHAT_FEELINGS.train, 40, "pretrain/prose", (s) => `Thank you for telling me. ${s.reply}`),
    ...promptsOf(CODING.train, 250, "pretrain/prose", (s) => s.t.explain),
    ...promptsOf(AGENT_PLANS.train, 120, "pretrain/prose", planProse),
    ...promptsOf(AGENT_TOOL_CALLS.train, 60, "pretrain/prose", toolProse),
    ...promptsOf(UI.train, 150, "pretrain/prose", uiProse),
    // Formats, only when asked for.
    ...promptsOf(
      CODING.train,
      150,
      "pretrain/format",
      codingAnswer,
      cue("Answer with a code block:", "Answer with a code block."),
    ),
    ...promptsOf(
      UI.train,
      120,
      "pretrain/format",
      uiAnswer,
      cue("Answer as a UI document:", "Answer as a UI document."),
    ),
    ...promptsOf(
      AGENT_PLANS.train,
      120,
      "pretrain/format",
      planAnswer,
      cue("Answer with a numbered plan:", "Answer with a numbered plan."),
    ),
    ...promptsOf(
      AGENT_TOOL_CALLS.train,
      50,
      "pretrain/format",
      toolAnswer,
      cue("Answer with a tool call:", "Answer with a tool call."),
    ),
    ...promptsOf(
      CHAT_TOPICS.train,
      100,
      "pretrain/format",
      (s) => s.reply,
      cue("Reply in a few words:", "Reply in a few words."),
    ),
    ...promptsOf(
      CHAT_FEELINGS.train,
      20,
      "pretrain/format",
      (s) => s.reply,
      cue("Reply in a few words:", "Reply in a few words."),
    ),
  ];
  const next = rng("pretrain/order");
  const order = shuffled(single, next);
  // A few hundred two-exchange conversations, so the base also sees history before a question.
  const general = single.slice(
    0,
    FACTS.length * FACT_WORDINGS.length + WORDS.length * 3 + CAPITALS.length * 3,
  );
  const multi: SeedMessage[][] = [];
  for (let i = 0; i < 300; i++) {
    const a = general[Math.floor(next() * general.length)]!;
    const b = general[Math.floor(next() * general.length)]!;
    multi.push([...a, ...b]);
  }
  return shuffled([...order, ...multi], next).map((messages) => ({ messages }));
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
