/**
 * Agent: a numbered plan of three steps ("1. …\n2. …\n3. …"), or, when the prompt asks for a
 * tool, one tool call as JSON: {"tool":"<name>","arguments":{…}} and nothing else.
 */
import { type Family, fill, type SplitFamily } from "./types";

export interface PlanGoal {
  /** Imperative, as in "Plan the steps to move my blog to a new host." */
  goal: string;
  steps: [string, string, string];
}

const g = (goal: string, a: string, b: string, c: string): PlanGoal => ({ goal, steps: [a, b, c] });

const PLANS_TRAIN: readonly PlanGoal[] = [
  g(
    "move my blog to a new host",
    "Back up the blog files and database.",
    "Set up the site on the new host.",
    "Point the domain to the new host.",
  ),
  g(
    "plan a birthday party",
    "Pick a date and invite the guests.",
    "Order a cake and snacks.",
    "Decorate the room on the day.",
  ),
  g(
    "cook pasta for dinner",
    "Boil salted water in a big pot.",
    "Cook the pasta until it is tender.",
    "Drain it and add your sauce.",
  ),
  g(
    "clean my kitchen",
    "Clear and wipe the counters.",
    "Wash the dishes and the sink.",
    "Sweep and mop the floor.",
  ),
  g(
    "start running",
    "Buy comfortable running shoes.",
    "Run slowly for short distances.",
    "Add a little more each week.",
  ),
  g(
    "organize my desk",
    "Take everything off the desk.",
    "Throw away what you do not need.",
    "Put back only the daily items.",
  ),
  g(
    "prepare for a job interview",
    "Research the company.",
    "Practice answers to common questions.",
    "Pick your clothes and plan the route.",
  ),
  g(
    "set up a new laptop",
    "Install the system updates.",
    "Install the apps you need.",
    "Copy your files and set up backups.",
  ),
  g(
    "write a short story",
    "Choose a main character and a goal.",
    "Outline the beginning, middle and end.",
    "Write a draft, then edit it.",
  ),
  g(
    "save money each month",
    "Track what you spend for a month.",
    "Set a monthly budget.",
    "Move savings to a separate account first.",
  ),
  g(
    "plant a small garden",
    "Choose a sunny spot.",
    "Prepare the soil and plant the seeds.",
    "Water the plants regularly.",
  ),
  g(
    "paint a room",
    "Move the furniture and cover the floor.",
    "Tape the edges and apply a primer.",
    "Paint two thin coats.",
  ),
  g(
    "learn a new language",
    "Learn the most common words first.",
    "Practice a little every day.",
    "Talk with native speakers.",
  ),
  g(
    "host a dinner for friends",
    "Choose a simple menu.",
    "Shop and cook ahead of time.",
    "Set the table before guests arrive.",
  ),
  g(
    "back up my photos",
    "Collect the photos in one folder.",
    "Copy them to an external drive.",
    "Add a cloud backup too.",
  ),
  g(
    "study for an exam",
    "List the topics to cover.",
    "Study one topic each day.",
    "Take practice tests at the end.",
  ),
  g(
    "move to a new apartment",
    "Pack your things room by room.",
    "Book a moving van.",
    "Update your address.",
  ),
  g(
    "build a bookshelf",
    "Buy the boards and screws.",
    "Cut and sand the pieces.",
    "Assemble the shelf and fix it to the wall.",
  ),
  g(
    "plan a weekend trip",
    "Choose a destination.",
    "Book a place to stay.",
    "Pack light and plan the route.",
  ),
  g(
    "make a budget for a holiday",
    "List the main costs.",
    "Set a daily spending limit.",
    "Keep some money for surprises.",
  ),
  g(
    "launch a small website",
    "Choose a domain name.",
    "Build the pages with a simple tool.",
    "Publish it and share the link.",
  ),
  g(
    "adopt a cat",
    "Find a local shelter.",
    "Prepare food, a bed and a litter box.",
    "Give the cat time to settle in.",
  ),
  g(
    "fix a slow computer",
    "Close apps you do not use.",
    "Remove old files and programs.",
    "Restart and install updates.",
  ),
  g(
    "get better sleep",
    "Go to bed at the same time.",
    "Avoid screens before bed.",
    "Keep the bedroom dark and cool.",
  ),
  g(
    "bake a chocolate cake",
    "Mix the flour, sugar and cocoa.",
    "Add eggs, milk and butter.",
    "Bake until a toothpick comes out clean.",
  ),
  g(
    "start a podcast",
    "Pick a topic and a name.",
    "Record a few episodes.",
    "Publish them on a podcast platform.",
  ),
  g(
    "write a resume",
    "List your jobs and skills.",
    "Write short, clear descriptions.",
    "Check the spelling and layout.",
  ),
  g(
    "organize a team meeting",
    "Set the goal and agenda.",
    "Invite the right people.",
    "Share notes after the meeting.",
  ),
  g(
    "learn to play chess",
    "Learn how each piece moves.",
    "Play short games online.",
    "Review your games to improve.",
  ),
  g("declutter my closet", "Take out all the clothes.", "Keep only what you wear.", "Donate the rest."),
];

const PLANS_HELDOUT: readonly PlanGoal[] = [
  g("repaint my fence", "Clean and sand the fence.", "Apply a primer.", "Paint it on a dry day."),
  g("plan a family reunion", "Choose a date and a place.", "Send invitations early.", "Plan food and games."),
  g(
    "teach my dog a new trick",
    "Pick a simple trick.",
    "Reward each small success.",
    "Practice a few minutes daily.",
  ),
  g("set up a home office", "Find a quiet corner.", "Get a good chair and desk.", "Arrange good lighting."),
  g("organize a book club", "Invite a few readers.", "Choose the first book.", "Set a monthly meeting day."),
  g(
    "renovate a bathroom",
    "Set a budget and a design.",
    "Hire a plumber if needed.",
    "Replace the fixtures and tiles.",
  ),
  g(
    "plan a school fundraiser",
    "Pick a cause and a goal.",
    "Choose an event, like a bake sale.",
    "Promote it and count the money.",
  ),
  g("learn to juggle", "Start with one ball.", "Add a second ball.", "Practice with three balls daily."),
  g("write a wedding speech", "Collect a few stories.", "Write a short draft.", "Practice it out loud."),
];

/** The agent's plan: three numbered lines. */
export const planAnswer = (p: PlanGoal): string => p.steps.map((s, i) => `${i + 1}. ${s}`).join("\n");

/** The plan as one sentence of prose (the base model's answer in the pretraining corpus). */
export function planProse(p: PlanGoal): string {
  const [a, b, c] = p.steps.map((s) => s.replace(/\.$/, ""));
  const lower = (s: string | undefined): string => (s ? s.charAt(0).toLowerCase() + s.slice(1) : "");
  return `${a}, then ${lower(b)}, and finally ${lower(c)}.`;
}

export interface ToolUse {
  tool: string;
  arguments: Record<string, string | number>;
  /** What the user asks, in words (slots filled): "get the weather in Paris". */
  request: string;
}

const weather = (city: string): ToolUse => ({
  tool: "get_weather",
  arguments: { city },
  request: `get the weather in ${city}`,
});
const search = (query: string): ToolUse => ({
  tool: "search_web",
  arguments: { query },
  request: `search the web for ${query}`,
});
const timer = (minutes: number): ToolUse => ({
  tool: "set_timer",
  arguments: { minutes },
  request: `set a timer for ${minutes} minutes`,
});
const openFile = (path: string): ToolUse => ({
  tool: "open_file",
  arguments: { path },
  request: `open the file ${path}`,
});
const translate = (text: string, language: string): ToolUse => ({
  tool: "translate_text",
  arguments: { text, language },
  request: `translate "${text}" into ${language}`,
});

/** The tools the agent knows, with their argument names (resources/training/README.md). */
export const AGENT_TOOLS: Readonly<Record<string, readonly string[]>> = {
  get_weather: ["city"],
  search_web: ["query"],
  set_timer: ["minutes"],
  open_file: ["path"],
  translate_text: ["text", "language"],
};

const TOOLS_TRAIN: readonly ToolUse[] = [
  ...["Paris", "Tokyo", "Berlin", "Madrid", "Cairo", "Toronto", "Sydney", "Rome"].map(weather),
  ...[
    "best pizza recipe",
    "how tides work",
    "history of the bicycle",
    "easy card tricks",
    "tallest mountains in Europe",
    "how to fold a paper plane",
  ].map(search),
  ...[5, 10, 15, 20, 25].map(timer),
  ...["notes/todo.md", "report.txt", "docs/plan.md", "recipes/soup.txt"].map(openFile),
  translate("good morning", "Spanish"),
  translate("thank you", "French"),
  translate("see you soon", "German"),
  translate("where is the station", "Italian"),
];

const TOOLS_HELDOUT: readonly ToolUse[] = [
  ...["Lisbon", "Oslo"].map(weather),
  ...["how volcanoes form", "tips for growing tomatoes"].map(search),
  ...[12, 40].map(timer),
  ...["budget.csv", "music/playlist.txt"].map(openFile),
  translate("sweet dreams", "Portuguese"),
  translate("happy birthday", "Japanese"),
];

/** The tool call as the agent writes it: exactly {"tool":…,"arguments":{…}}. */
export const toolAnswer = (u: ToolUse): string => JSON.stringify({ tool: u.tool, arguments: u.arguments });

const planFamily = (name: string, subjects: readonly PlanGoal[], wordings: string[]): Family<PlanGoal> => ({
  name,
  subjects,
  wordings,
  keys: (s) => [s.goal],
  prompt: (w, s) => fill(w, { g: s.goal }),
  answer: planAnswer,
});

const toolFamily = (name: string, subjects: readonly ToolUse[], wordings: string[]): Family<ToolUse> => ({
  name,
  subjects,
  wordings,
  keys: (s) => Object.values(s.arguments).map((v) => (typeof v === "number" ? `${v} minutes` : v)),
  prompt: (w, s) => fill(w, { r: s.request }),
  answer: toolAnswer,
});

export const AGENT_PLANS: SplitFamily<PlanGoal> = {
  train: planFamily("agent-plans", PLANS_TRAIN, [
    "Plan the steps to {g}.",
    "How should I {g}? Give me a plan.",
    "Make a plan to {g}.",
    "What are the steps to {g}?",
    "Help me {g}, step by step.",
    "I want to {g}. Where do I start?",
  ]),
  heldout: planFamily("agent-plans-heldout", PLANS_HELDOUT, [
    "Break down how to {g}.",
    "Outline a short plan so I can {g}.",
    "Walk me through how I would {g}.",
  ]),
  counts: { train: 140, heldout: 24 },
};

export const AGENT_TOOL_CALLS: SplitFamily<ToolUse> = {
  train: toolFamily("agent-tools", TOOLS_TRAIN, [
    "Use a tool to {r}.",
    "Call a tool and {r}.",
    "Please {r} with a tool.",
    "Tool call needed: {r}.",
  ]),
  heldout: toolFamily("agent-tools-heldout", TOOLS_HELDOUT, [
    "Using one of your tools, {r}.",
    "Run the right tool to {r}.",
  ]),
  counts: { train: 60, heldout: 12 },
};
