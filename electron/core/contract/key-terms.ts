/**
 * Key content of a held-out case, derived from its prompt and reference answer: what a right
 * answer must mention (chat: the subject; a plan: what each step is about) and what a UI
 * document must hold (the labels and numbers the prompt asked for). Used by task-contract.ts
 * to write the default contract's correctness checks; the contract file lists them per case.
 */

const STOP = new Set(
  (
    "a an the and or but if of to in on at by for with from as is are was were be been it its this that " +
    "these those you your yours my me i we our they them he she his her can could would should will just " +
    "very really quite some any each every all more most much many few little like about what whats how " +
    "when where which who why do does did done have has had get got make made let lets please thanks " +
    "thank share view opinion fan curious say friendly words quick question know lately moment feeling " +
    "morning woke up there here so too also than then now today time way thing things"
  ).split(" "),
);

/** Words any plan may use: a step is covered by what it is about, not by "pick" or "daily". */
const PLAN_STOP = new Set(
  (
    "start pick choose set find add plan practice write send arrange keep use first second third short " +
    "good great nice lovely new small simple daily day days well lot bit may might need needed few one " +
    "two three"
  ).split(" "),
);

const SUFFIXES = ["ings", "ing", "ers", "ies", "es", "ed", "er", "s", "e", "y"];

/** A crude stem: lower case, the commonest English suffix cut while at least 4 letters stay. */
export function stem(word: string): string {
  const w = word.toLowerCase();
  for (const s of SUFFIXES) if (w.endsWith(s) && w.length - s.length >= 4) return w.slice(0, -s.length);
  return w;
}

export const wordsOf = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP.has(w));

/**
 * Content words of `reference` that also occur in `prompt` (compared by stem), as stems, in the
 * reference's order, without repeats: "Sorry you feel anxious…" for "I'm really anxious" →
 * ["anxious"].
 */
export function sharedTerms(prompt: string, reference: string): string[] {
  const promptStems = new Set(wordsOf(prompt).map(stem));
  const out: string[] = [];
  for (const w of wordsOf(reference)) {
    const s = stem(w);
    const hit = [...promptStems].some((p) => p.startsWith(s) || s.startsWith(p));
    if (hit && !out.includes(s)) out.push(s);
  }
  return out;
}

/** The content words of one plan step, as stems (what a plan covering that step mentions). */
export function stepTerms(step: string): string[] {
  const out: string[] = [];
  for (const w of wordsOf(step.replace(/^\s*\d+\.\s*/, ""))) {
    if (PLAN_STOP.has(w)) continue;
    const s = stem(w);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
};

/** Numbers a prompt states, in digits or words ("two of five", "ninety percent", "12 minutes"). */
export function promptNumbers(prompt: string): number[] {
  const out: number[] = [];
  for (const w of prompt.toLowerCase().split(/[^a-z0-9.]+/)) {
    const n = /^\d+(\.\d+)?$/.test(w) ? Number(w) : NUMBER_WORDS[w];
    if (n !== undefined && !out.includes(n)) out.push(n);
  }
  return out;
}

const TEXT_PROPS = new Set(["label", "title", "submitLabel", "caption", "text", "placeholder"]);

/**
 * What a UI document must hold for its prompt, from the reference document: its root
 * component, the label-like strings whose every content word the prompt mentions (a button's
 * "Send", a form's "Chess club"), and the numbers the prompt states that the reference uses.
 */
export function uiRequirements(
  prompt: string,
  referenceDoc: unknown,
): { component: string | undefined; texts: string[]; numbers: number[] } {
  const promptStems = new Set(wordsOf(prompt).map(stem));
  const stated = promptNumbers(prompt);
  const texts: string[] = [];
  const numbers: number[] = [];
  const walk = (v: unknown, key: string | null): void => {
    if (typeof v === "string" && key !== null && TEXT_PROPS.has(key)) {
      const words = wordsOf(v);
      const covered =
        words.length > 0 &&
        words.every((w) => [...promptStems].some((p) => p.startsWith(stem(w)) || stem(w).startsWith(p)));
      if (covered && !texts.some((t) => t.toLowerCase() === v.toLowerCase())) texts.push(v);
    } else if (
      typeof v === "number" &&
      key !== null &&
      key !== "version" &&
      stated.includes(v) &&
      !numbers.includes(v)
    )
      numbers.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(referenceDoc, null);
  const root = (referenceDoc as { blocks?: Array<{ root?: { type?: unknown } }> } | undefined)?.blocks?.[0]
    ?.root?.type;
  const component = typeof root === "string" ? root : undefined;
  // The component's own name ("Progress") comes with the component; a composite label ("Bus or
  // train?") is asked through its parts ("Bus", "Train"); a word inside a longer label
  // ("Report" in "Report a bug") through that label.
  const named = texts.filter((t) => t.toLowerCase() !== component?.toLowerCase());
  const stemsOf = (t: string): string[] => wordsOf(t).map(stem);
  const parts = named.filter(
    (t) =>
      stemsOf(t).length < 2 ||
      !stemsOf(t).every((s) =>
        named.some((o) => o !== t && stemsOf(o).length < stemsOf(t).length && stemsOf(o).includes(s)),
      ),
  );
  const kept = parts.filter(
    (t) =>
      stemsOf(t).length > 1 ||
      !parts.some((o) => o !== t && stemsOf(o).length > 1 && o.toLowerCase().includes(t.toLowerCase())),
  );
  return { component, texts: kept, numbers };
}
