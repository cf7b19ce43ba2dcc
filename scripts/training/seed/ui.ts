/**
 * UI: a GenUI document with one small component (a Form with one or two fields, a ChoiceList,
 * a Table with two rows, a Button or a Progress bar), valid for the app's catalog and written
 * in the exact shape of UI mode's grammar (grammar-shape.ts). The answer is JSON only.
 */
import { grammarShape } from "./grammar-shape";
import { type Family, fill, type SplitFamily } from "./types";

type Field =
  | { kind: "text"; name: string; label: string; multiline?: boolean }
  | { kind: "checkbox"; name: string; label: string }
  | { kind: "number"; name: string; label: string; min?: number }
  | { kind: "slider"; name: string; label: string; min: number; max: number };

/** A component request: what the prompt asks for and the one component that answers it. */
export type UiRequest = { thing: string } & (
  | { type: "Form"; title: string; submitLabel: string; fields: Field[] }
  | { type: "ChoiceList"; label: string; options: string[]; multiple?: boolean }
  | { type: "Table"; columns: [string, string]; rows: [[string, string | number], [string, string | number]] }
  | { type: "Button"; label: string; action: string; variant?: "primary" | "secondary" | "danger" }
  | { type: "Progress"; label: string; value: number; max?: number }
);

const slug = (label: string): string =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_|_$/g, "");

const form = (thing: string, title: string, submitLabel: string, ...fields: Field[]): UiRequest => ({
  thing,
  type: "Form",
  title,
  submitLabel,
  fields,
});
const text = (label: string, multiline?: boolean): Field =>
  multiline
    ? { kind: "text", name: slug(label), label, multiline }
    : { kind: "text", name: slug(label), label };
const check = (label: string): Field => ({ kind: "checkbox", name: slug(label), label });
const choices = (thing: string, label: string, options: string[], multiple?: boolean): UiRequest =>
  multiple
    ? { thing, type: "ChoiceList", label, options, multiple }
    : { thing, type: "ChoiceList", label, options };
const table = (
  thing: string,
  columns: [string, string],
  a: [string, string | number],
  b: [string, string | number],
): UiRequest => ({ thing, type: "Table", columns, rows: [a, b] });
const button = (thing: string, label: string, action: string, variant?: "primary" | "danger"): UiRequest =>
  variant ? { thing, type: "Button", label, action, variant } : { thing, type: "Button", label, action };
const progress = (thing: string, label: string, value: number, max?: number): UiRequest =>
  max === undefined
    ? { thing, type: "Progress", label, value }
    : { thing, type: "Progress", label, value, max };

const TRAIN: readonly UiRequest[] = [
  form("a sign-up form for the newsletter", "Newsletter", "Sign up", text("Email")),
  form("a contact form", "Contact us", "Send", text("Message", true)),
  form("a form to enter my nickname", "Nickname", "Save", text("Nickname")),
  form("a feedback form", "Feedback", "Send", text("Comments", true)),
  form("a form to book a table", "Book a table", "Book", {
    kind: "number",
    name: "guests",
    label: "Guests",
    min: 1,
  }),
  form("a form to rate our service", "Rate us", "Rate", {
    kind: "slider",
    name: "rating",
    label: "Rating",
    min: 1,
    max: 5,
  }),
  form("a form to add a task", "New task", "Add", text("Task")),
  form("a search box", "Search", "Search", text("Search")),
  form("a form to choose pizza toppings", "Toppings", "Order", check("Cheese"), check("Olives")),
  form("a form to accept the terms", "Terms", "Continue", check("I accept the terms")),
  choices("a poll about favorite fruit", "Favorite fruit", ["Apple", "Banana", "Cherry"]),
  choices("a choice between tea and coffee", "Tea or coffee?", ["Tea", "Coffee"]),
  choices("a list to pick a pizza size", "Pizza size", ["Small", "Medium", "Large"]),
  choices("a question asking which day works best", "Best day?", ["Monday", "Friday"]),
  choices("a multiple choice of colors I like", "Colors you like", ["Red", "Green", "Blue"], true),
  choices("a picker for the travel class", "Travel class", ["Economy", "Business"]),
  table("a table of two planets and their moons", ["Planet", "Moons"], ["Earth", 1], ["Mars", 2]),
  table(
    "a table of my two tasks and their status",
    ["Task", "Status"],
    ["Write report", "Done"],
    ["Call Sam", "Open"],
  ),
  table("a price table for two coffee drinks", ["Drink", "Price"], ["Espresso", 2.5], ["Latte", 3.5]),
  table(
    "a table of two cities and their countries",
    ["City", "Country"],
    ["Rome", "Italy"],
    ["Tokyo", "Japan"],
  ),
  table(
    "a table with two fruits and their colors",
    ["Fruit", "Color"],
    ["Lemon", "Yellow"],
    ["Plum", "Purple"],
  ),
  table(
    "a table of two books and their authors",
    ["Book", "Author"],
    ["Emma", "Jane Austen"],
    ["Dracula", "Bram Stoker"],
  ),
  button("a button to save my changes", "Save changes", "save", "primary"),
  button("a delete button", "Delete", "delete", "danger"),
  button("a button to start the timer", "Start timer", "start_timer"),
  button("a button that says hello", "Hello", "say_hello"),
  button("a confirm button", "Confirm", "confirm", "primary"),
  progress("a progress bar at half way", "Progress", 50),
  progress("a progress bar for a download at eighty percent", "Download", 80),
  progress("a progress bar showing three of ten steps done", "Steps", 3, 10),
  progress("an upload progress bar at twenty percent", "Upload", 20),
  progress("a progress bar for a full battery", "Battery", 100),
];

const HELDOUT: readonly UiRequest[] = [
  form("a form to join the chess club", "Chess club", "Join", text("Name")),
  form("a form to report a bug", "Report a bug", "Report", text("Summary", true)),
  form("a form to order flowers", "Order flowers", "Order", {
    kind: "number",
    name: "roses",
    label: "Roses",
    min: 1,
  }),
  form("a form to pick sandwich extras", "Extras", "Add", check("Tomato"), check("Onion")),
  choices("a poll about the best season", "Best season", ["Spring", "Summer", "Autumn"]),
  choices("a choice between the bus and the train", "Bus or train?", ["Bus", "Train"]),
  choices("a list to choose a movie genre", "Movie genre", ["Comedy", "Drama", "Horror"]),
  table("a table of two animals and their sounds", ["Animal", "Sound"], ["Cow", "Moo"], ["Duck", "Quack"]),
  table(
    "a table of two languages and their greetings",
    ["Language", "Greeting"],
    ["Spanish", "Hola"],
    ["French", "Bonjour"],
  ),
  button("a button to send the message", "Send", "send", "primary"),
  button("a button to download the report", "Download report", "download"),
  progress("a progress bar at ninety percent", "Progress", 90),
  progress("a progress bar for a quiz with two of five questions answered", "Quiz", 2, 5),
];

const optionsOf = (labels: string[]) => labels.map((label) => ({ value: slug(label), label }));

/** The document's single component node (before the grammar shape). */
function node(r: UiRequest): Record<string, unknown> {
  switch (r.type) {
    case "Form":
      return {
        type: "Form",
        id: "form1",
        props: { title: r.title, submitLabel: r.submitLabel, fields: r.fields },
      };
    case "ChoiceList":
      return {
        type: "ChoiceList",
        id: "choice1",
        props: { label: r.label, options: optionsOf(r.options), ...(r.multiple ? { multiple: true } : {}) },
      };
    case "Table":
      return {
        type: "Table",
        id: "table1",
        props: {
          columns: r.columns.map((label, i) => ({
            key: slug(label),
            label,
            ...(typeof r.rows[0][i] === "number" ? { numeric: true } : {}),
          })),
          rows: r.rows,
        },
      };
    case "Button":
      return {
        type: "Button",
        id: "button1",
        props: { label: r.label, action: r.action, variant: r.variant },
      };
    case "Progress":
      return { type: "Progress", id: "progress1", props: { label: r.label, value: r.value, max: r.max } };
  }
}

/** The UI specialist's answer: the document as compact JSON, in the grammar's shape. */
export function uiAnswer(r: UiRequest): string {
  return JSON.stringify(grammarShape({ version: 1, blocks: [{ kind: "ui", root: node(r) }] }));
}

/** The component in words (the base model's prose answer in the pretraining corpus). */
export function uiProse(r: UiRequest): string {
  switch (r.type) {
    case "Form":
      return `That would be a form asking for ${r.fields.map((f) => f.label.toLowerCase()).join(" and ")}, with a ${r.submitLabel} button.`;
    case "ChoiceList":
      return `That would be a list to choose from ${r.options.join(", ")}.`;
    case "Table":
      return `That would be a small table with the columns ${r.columns.join(" and ")}, and two rows.`;
    case "Button":
      return `That would be a single button labeled ${r.label}.`;
    case "Progress":
      return `That would be a bar showing ${r.value} out of ${r.max ?? 100}.`;
  }
}

const family = (name: string, subjects: readonly UiRequest[], wordings: string[]): Family<UiRequest> => ({
  name,
  subjects,
  wordings,
  keys: (s) => [s.thing],
  prompt: (w, s) => fill(w, { x: s.thing }),
  answer: uiAnswer,
});

export const UI: SplitFamily<UiRequest> = {
  train: family("ui", TRAIN, [
    "Show me {x}.",
    "I need {x}.",
    "Can you make {x}?",
    "Give me {x}.",
    "Build {x} for me.",
    "Display {x}.",
    "Make {x}.",
    "Please show {x}.",
  ]),
  heldout: family("ui-heldout", HELDOUT, [
    "Could you put together {x}, please?",
    "I would like to see {x} on screen.",
    "Render {x} here, thanks.",
  ]),
  counts: { train: 200, heldout: 36 },
};
