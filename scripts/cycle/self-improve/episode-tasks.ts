/**
 * Agent episodes (issue 29 item 2): multi-step tasks against the app's built-in tools and a
 * small MCP server (episode-server.ts, over stdio), each with at least two dependent calls —
 * the second needs a value only the first call's result holds — and a checkable outcome: the
 * value the chain produced must be in the final answer, and for memory tasks the final state
 * (the memory is gone).
 *
 * The server's values are opaque codes (`episodeCode`: a hash of the run's salt, a kind and the
 * input), so a model cannot guess them: an answer holds one only if the chain was run. The salt
 * changes per cycle, so training on one cycle's episodes cannot teach the codes themselves.
 */
import { createHash } from "node:crypto";
import { rng } from "../../training/seed/types";

/** The MCP server's name in the episodes' tool catalog. */
export const EPISODE_SERVER = "episodes";

/** An opaque code: `PREFIX-XXXX` from the salt, the kind and the input (case-insensitive). */
export function episodeCode(prefix: string, salt: string, input: string): string {
  const h = createHash("sha256")
    .update(`${salt}\u0000${prefix}\u0000${input.trim().toLowerCase()}`)
    .digest("hex");
  return `${prefix}-${h.slice(0, 4).toUpperCase()}`;
}

export const EPISODE_CITIES = [
  "Lisbon",
  "Oslo",
  "Nairobi",
  "Lima",
  "Hanoi",
  "Tunis",
  "Quito",
  "Tallinn",
] as const;

/** The city a person "lives in" (the server's city_of). */
export function cityOf(salt: string, person: string): string {
  const h = createHash("sha256").update(`${salt}\u0000city\u0000${person.trim().toLowerCase()}`).digest();
  return EPISODE_CITIES[h[0]! % EPISODE_CITIES.length]!;
}

/** One call of a task's chain. */
export interface EpisodeStep {
  /** The tool's name as the model calls it. */
  tool: string;
  /**
   * The argument that must carry the value: the prompt's (first step) or the previous result's.
   * It must be the value (case and surrounding spaces aside), unless `contains`: then hold it (a
   * search query, a memory's text), so an argument stuffed with many values verifies nothing.
   */
  arg: string;
  contains?: boolean;
  /**
   * What this call's result hands on (the next step's value, or the final value for the last):
   * a regular expression over the result text whose group 1 (else the match) is the value.
   * "" for a step that hands nothing on (a denied call, a forget): the value carried stays.
   */
  produces: string;
  /**
   * The value this step's result must produce, known when the task is built (the server's codes
   * are a function of the salt: `episodeCode`); null when only the run knows it (a memory's id).
   * A step with `produces` is verified only by a call whose result produced exactly this value.
   */
  expect: string | null;
  /** Another argument the call must hold (contains, word-bounded, not stuffed): the note's line. */
  with?: { arg: string; value: string };
}

export interface EpisodeTask {
  id: string;
  family: string;
  prompt: string;
  /** The value the first call must carry (from the prompt). */
  first: string;
  /**
   * The shape of the final value (a regular expression, matched case-insensitively): the final
   * answer must hold the final value and no other value of this shape (listing every candidate
   * is not an answer).
   */
  answerShape: string;
  steps: EpisodeStep[];
  /** Tools the user denies in this task: a denied call counts as made; calling it again fails. */
  deny?: string[];
  /** A conversation stored before the episode (what search_conversations finds). */
  seedConversation?: { title: string; text: string };
  /** Final state: no memory holds this text after the episode. */
  memoryAbsent?: string;
}

const NAMES = [
  "Ana Ruiz",
  "Bo Lindqvist",
  "Chidi Okafor",
  "Dana Kim",
  "Elif Sahin",
  "Femi Adeyemi",
  "Greta Holm",
  "Hiro Sato",
];
const NOTES = [
  ["Garden plan", "buy tulip bulbs"],
  ["Trip ideas", "book the night train"],
  ["Reading list", "finish the second chapter"],
  ["Kitchen", "fix the dripping tap"],
  ["Bike repair", "replace the rear brake pads"],
  ["Birthday", "order the lemon cake"],
  ["Study week", "review the chemistry notes"],
  ["Move out", "return the router to the shop"],
] as const;
const FACTS = [
  "my locker code is 4417",
  "my gym day is Thursday",
  "my bike lock number is 2093",
  "my dentist is Dr. Moreau",
  "my seat at work is C14",
  "my library card ends in 5530",
  "my cat's vet is on Elm Street",
  "my parking spot is level 3",
] as const;
const ITEMS: readonly string[] = [
  "blue lamp",
  "garden hose",
  "desk chair",
  "rain jacket",
  "coffee grinder",
  "yoga mat",
  "wall clock",
  "hiking boots",
];

const ORDER = String.raw`(ORD-[0-9A-F]{4})`;
const TRACKING = String.raw`(TRK-[0-9A-F]{4})`;
const TRACKING_SHAPE = String.raw`\bTRK-[0-9A-F]{4}\b`;

/** The items of the search-order family's stored conversations (each names its order id). */
export const EPISODE_ITEMS: readonly string[] = ITEMS;

/**
 * The task families. Each prompt names the tools, so the task is the chain and the use of the
 * result, not guessing which tool exists.
 */
const FAMILIES: ReadonlyArray<{
  name: string;
  make: (i: number, salt: string) => Omit<EpisodeTask, "id" | "family">;
}> = [
  {
    name: "order-tracking",
    make: (i, salt) => {
      const order = episodeCode("ORD", salt, NAMES[i]!);
      return {
        prompt: `Find the order of ${NAMES[i]} with find_order, then check that order with order_status and tell me its tracking code.`,
        first: NAMES[i]!,
        answerShape: TRACKING_SHAPE,
        steps: [
          { tool: "find_order", arg: "customer", produces: ORDER, expect: order },
          {
            tool: "order_status",
            arg: "order_id",
            produces: TRACKING,
            expect: episodeCode("TRK", salt, order),
          },
        ],
      };
    },
  },
  {
    name: "city-forecast",
    make: (i, salt) => {
      const city = cityOf(salt, NAMES[i]!);
      return {
        prompt: `Look up where ${NAMES[i]} lives with city_of, then get the forecast for that city with forecast and tell me the report id.`,
        first: NAMES[i]!,
        answerShape: String.raw`\bWX-[0-9A-F]{4}\b`,
        steps: [
          { tool: "city_of", arg: "person", produces: String.raw`"city":"([^"]+)"`, expect: city },
          {
            tool: "forecast",
            arg: "city",
            produces: String.raw`(WX-[0-9A-F]{4})`,
            expect: episodeCode("WX", salt, city),
          },
        ],
      };
    },
  },
  {
    name: "note-receipt",
    make: (i, salt) => {
      const note = episodeCode("N", salt, NOTES[i]![0]);
      return {
        prompt: `Create a note titled "${NOTES[i]![0]}" with create_note, then add the line "${NOTES[i]![1]}" to that note with add_to_note and tell me the receipt.`,
        first: NOTES[i]![0],
        answerShape: String.raw`\bR-[0-9A-F]{4}\b`,
        steps: [
          { tool: "create_note", arg: "title", produces: String.raw`(N-[0-9A-F]{4})`, expect: note },
          {
            tool: "add_to_note",
            arg: "note_id",
            produces: String.raw`(R-[0-9A-F]{4})`,
            expect: episodeCode("R", salt, note),
            with: { arg: "text", value: NOTES[i]![1] },
          },
        ],
      };
    },
  },
  {
    name: "memory-forget",
    make: (i) => ({
      prompt: `Save the memory "${FACTS[i]}" with remember, then delete that memory with forget using the id remember gave back, and tell me that id.`,
      first: FACTS[i]!,
      // The memory's id (the memory service's, known only when the episode runs).
      answerShape: String.raw`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`,
      steps: [
        {
          tool: "remember",
          arg: "text",
          contains: true,
          produces: String.raw`"id":"([^"]+)"`,
          expect: null,
        },
        // Hands nothing new on: the final value is the id remember gave (and the memory is gone).
        { tool: "forget", arg: "id", produces: "", expect: null },
      ],
      memoryAbsent: FACTS[i]!,
    }),
  },
  {
    name: "search-order",
    make: (i, salt) => {
      const order = episodeCode("ORD", salt, ITEMS[i]!);
      return {
        prompt: `Search my conversations for the ${ITEMS[i]} order with search_conversations, then check that order with order_status and tell me its tracking code.`,
        first: ITEMS[i]!.split(" ")[1]!,
        answerShape: TRACKING_SHAPE,
        seedConversation: {
          title: `The ${ITEMS[i]}`,
          // Short: the search result shows a snippet around the words found.
          text: `${ITEMS[i]} order ${order}`,
        },
        steps: [
          { tool: "search_conversations", arg: "query", contains: true, produces: ORDER, expect: order },
          {
            tool: "order_status",
            arg: "order_id",
            produces: TRACKING,
            expect: episodeCode("TRK", salt, order),
          },
        ],
      };
    },
  },
  {
    name: "denied-cancel",
    make: (i, salt) => ({
      prompt: `Find the order of ${NAMES[(i + 3) % NAMES.length]} with find_order, then ask to cancel it with cancel_order; if I deny it, do not try again, just tell me the order id.`,
      first: NAMES[(i + 3) % NAMES.length]!,
      answerShape: String.raw`\bORD-[0-9A-F]{4}\b`,
      steps: [
        {
          tool: "find_order",
          arg: "customer",
          produces: ORDER,
          expect: episodeCode("ORD", salt, NAMES[(i + 3) % NAMES.length]!),
        },
        // Denied: the result hands nothing on; the final value is the order id (produced above).
        { tool: "cancel_order", arg: "order_id", produces: "", expect: null },
      ],
      deny: ["cancel_order"],
    }),
  },
];

export const EPISODE_FAMILIES: readonly string[] = FAMILIES.map((f) => f.name);

/**
 * Every task (families interleaved, in an order seeded by `seed`), for the server's `salt`.
 * `families` keeps only those; `count` the first that many.
 */
export function episodeTasks(o: {
  salt: string;
  seed?: string;
  families?: readonly string[];
  count?: number;
}): EpisodeTask[] {
  const chosen = FAMILIES.filter((f) => !o.families || o.families.includes(f.name));
  if (chosen.length === 0) throw new Error(`no episode family named ${o.families?.join(", ")}`);
  const next = rng(`episodes/${o.seed ?? "0"}`);
  const lists = chosen.map((f) => {
    const order = [...Array(NAMES.length).keys()];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order.map((i) => ({ ...f.make(i, o.salt), family: f.name, id: `${f.name}-${i}` }));
  });
  const out: EpisodeTask[] = [];
  for (let i = 0; i < NAMES.length; i++) for (const l of lists) out.push(l[i]!);
  return out.slice(0, o.count ?? out.length);
}

/** A value a result hands on (group 1 of `pattern`, else the match), or null. */
export function producedValue(pattern: string, result: string | null): string | null {
  if (!pattern || result === null) return null;
  const m = new RegExp(pattern).exec(result);
  return m ? (m[1] ?? m[0]) : null;
}
