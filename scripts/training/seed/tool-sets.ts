/**
 * Generated tool sets for the demo Agent (issue 30): it should call tools it has never seen from
 * their names, descriptions and schemas, as the app documents them in the prompt
 * (native/engine/tool-docs.ts). Each example offers a set of 2–6 tools (name, description,
 * JSON-schema parameters of string, number, enum and boolean fields) and asks for one of them
 * with argument values taken from the request, in one of several wordings; the answer is that
 * call, its result, then "Done.". Some examples offer tools and ask for a plan: the answer is
 * the plan, no call (tools in the prompt must not turn every request into a call).
 *
 * Half the training sets come behind the app's four built-in tools, listed first as the app's
 * catalog lists them (every Agent turn in the app offers them): never the tool asked for.
 *
 * Two disjoint pools: TRAIN_TOOLS make the training sets, HELDOUT_TOOLS the held-out sets (no
 * tool name, parameter name, value or distinctive description word in common; wordings differ
 * too). @modelcontextprotocol/server-everything's tools are a third held-out set that no
 * generated example uses (bench/agent-unseen-tools.ts asks for them in requests written by hand).
 */
import type { ToolDefinition } from "../../../common/engine-protocol";
import { BuiltinTools } from "../../../electron/core/tools/builtin-tools";
import { planAnswer, type PlanGoal } from "./agent";
import { fill, rng, shuffled } from "./types";

type Value = string | number | boolean;

export interface ParamSpec {
  name: string;
  type: "string" | "number" | "integer" | "boolean" | "enum";
  description: string;
  /** The values requests use (enum: the allowed values). */
  values: readonly Value[];
  /** Booleans: how a request says true and false. */
  phrases?: { true: string; false: string };
}

export interface ToolSpec {
  name: string;
  description: string;
  params: readonly ParamSpec[];
  /** How a user asks for it, `{param}` slots filled from the values (a boolean's phrase). */
  asks: readonly string[];
}

const str = (name: string, description: string, values: readonly string[]): ParamSpec => ({
  name,
  type: "string",
  description,
  values,
});
const num = (name: string, description: string, values: readonly number[]): ParamSpec => ({
  name,
  type: "integer",
  description,
  values,
});
const choice = (name: string, description: string, values: readonly string[]): ParamSpec => ({
  name,
  type: "enum",
  description,
  values,
});
const flag = (name: string, description: string, yes: string, no: string): ParamSpec => ({
  name,
  type: "boolean",
  description,
  values: [true, false],
  phrases: { true: yes, false: no },
});
const tool = (name: string, description: string, params: ParamSpec[], asks: string[]): ToolSpec => ({
  name,
  description,
  params,
  asks,
});

const CITIES = [
  "Paris",
  "Tokyo",
  "Berlin",
  "Madrid",
  "Cairo",
  "Toronto",
  "Sydney",
  "Rome",
  "Dublin",
  "Seoul",
];
const PEOPLE = ["Anna", "Ben", "Carla", "David", "Emma", "Frank", "Grace", "Hugo", "Ines", "Jonas"];

/** The training pool: the Agent's five first tools, then everyday ones of many kinds. */
export const TRAIN_TOOLS: readonly ToolSpec[] = [
  tool(
    "get_weather",
    "Get the current weather in a city.",
    [str("city", "City name", CITIES)],
    ["get the weather in {city}", "what is the weather like in {city}"],
  ),
  tool(
    "search_web",
    "Search the web and return the top results.",
    [str("query", "Search words", ["best pizza recipe", "how tides work", "easy card tricks", "old maps"])],
    ["search the web for {query}", "look up {query} online"],
  ),
  tool(
    "set_timer",
    "Set a timer that rings after a number of minutes.",
    [num("minutes", "Minutes", [5, 10, 15, 20, 25, 30, 45])],
    ["set a timer for {minutes} minutes", "start a {minutes} minute timer"],
  ),
  tool(
    "open_file",
    "Open a file from the user's disk.",
    [str("path", "File path", ["notes/todo.md", "report.txt", "docs/plan.md", "recipes/soup.txt"])],
    ["open the file {path}", "show me the file {path}"],
  ),
  tool(
    "translate_text",
    "Translate a text into another language.",
    [
      str("text", "Text to translate", ["good morning", "thank you", "see you soon", "good night"]),
      str("language", "Target language", ["Spanish", "French", "German", "Italian"]),
    ],
    ['translate "{text}" into {language}', 'say "{text}" in {language}'],
  ),
  tool(
    "send_email",
    "Send an email to a contact.",
    [str("to", "Contact name", PEOPLE), str("subject", "Subject line", ["lunch", "the report", "holidays"])],
    ["send an email to {to} about {subject}", "email {to} with the subject {subject}"],
  ),
  tool(
    "send_message",
    "Send a short chat message to a friend.",
    [str("friend", "Friend's name", PEOPLE), str("text", "Message", ["running late", "call me", "see you"])],
    ['send {friend} a message saying "{text}"', 'text {friend}: "{text}"'],
  ),
  tool(
    "add_event",
    "Add an event to the calendar.",
    [
      str("title", "Event title", ["dentist", "team lunch", "yoga class", "piano lesson"]),
      str("day", "Day", ["Monday", "Tuesday", "Friday", "Sunday"]),
    ],
    ["add {title} to my calendar on {day}", "put {title} in the calendar for {day}"],
  ),
  tool(
    "play_song",
    "Play a song by its title.",
    [
      str("title", "Song title", ["Yellow", "Imagine", "Hello", "Let It Be", "Blue Moon"]),
      flag("shuffle", "Shuffle after it", "then shuffle", "without shuffle"),
    ],
    ["play the song {title} {shuffle}", "put on {title} {shuffle}"],
  ),
  tool(
    "set_volume",
    "Change the speaker volume, from 0 to 100.",
    [num("level", "Volume level", [0, 10, 35, 50, 70, 90])],
    ["set the volume to {level}", "change the volume to {level}"],
  ),
  tool(
    "turn_lights",
    "Turn the lights of a room on or off.",
    [choice("room", "Room", ["kitchen", "bedroom", "hall", "garage"]), flag("on", "On or off", "on", "off")],
    ["turn the {room} lights {on}", "switch {on} the lights in the {room}"],
  ),
  tool(
    "set_thermostat",
    "Set the heating to a temperature in degrees.",
    [num("degrees", "Temperature", [18, 19, 20, 21, 22, 23])],
    ["set the heating to {degrees} degrees", "make it {degrees} degrees at home"],
  ),
  tool(
    "add_note",
    "Save a short note.",
    [str("text", "Note text", ["buy milk", "call the bank", "water the plants", "pay rent"])],
    ['save a note: "{text}"', 'write down "{text}"'],
  ),
  tool(
    "add_todo",
    "Add an item to a to-do list.",
    [
      str("item", "Item", ["clean the car", "fix the bike", "book flights"]),
      choice("list", "Which list", ["home", "work"]),
    ],
    ["add {item} to my {list} list", "put {item} on the {list} to-do list"],
  ),
  tool(
    "book_table",
    "Book a table at a restaurant.",
    [
      str("restaurant", "Restaurant name", ["Luigi's", "Golden Dragon", "Cafe Nova"]),
      num("people", "Number of people", [2, 3, 4, 6]),
    ],
    ["book a table at {restaurant} for {people} people", "reserve {restaurant} for {people}"],
  ),
  tool(
    "order_taxi",
    "Order a taxi to an address.",
    [str("address", "Where to", ["12 Oak Street", "the airport", "Central Station", "5 Hill Road"])],
    ["order a taxi to {address}", "get me a cab to {address}"],
  ),
  tool(
    "convert_currency",
    "Convert an amount of money between currencies.",
    [
      num("amount", "Amount", [10, 50, 120, 300]),
      choice("from", "From currency", ["USD", "EUR", "GBP"]),
      choice("to", "To currency", ["JPY", "CHF", "CAD"]),
    ],
    ["convert {amount} {from} to {to}", "how much is {amount} {from} in {to}"],
  ),
  tool(
    "convert_length",
    "Convert a length between units.",
    [num("value", "Length", [3, 8, 42, 100]), choice("unit", "Target unit", ["km", "miles", "feet"])],
    ["convert {value} meters to {unit}", "how many {unit} is {value} meters"],
  ),
  tool(
    "multiply",
    "Multiply two numbers.",
    [num("x", "First number", [3, 7, 12, 25]), num("y", "Second number", [4, 6, 9, 11])],
    ["multiply {x} by {y}", "what is {x} times {y}"],
  ),
  tool(
    "stock_price",
    "Get the latest price of a stock.",
    [str("symbol", "Ticker symbol", ["AAPL", "MSFT", "TSLA", "AMZN"])],
    ["get the stock price of {symbol}", "how is {symbol} trading"],
  ),
  tool(
    "news_headlines",
    "Get today's news headlines on a topic.",
    [
      choice("topic", "Topic", ["sports", "science", "business", "music"]),
      num("count", "How many", [3, 5, 10]),
    ],
    ["get {count} {topic} headlines", "show me {count} news stories about {topic}"],
  ),
  tool(
    "find_recipe",
    "Find a recipe for a dish.",
    [
      str("dish", "Dish", ["lasagna", "pancakes", "curry", "apple pie"]),
      flag("vegan", "Vegan only", "vegan", "not vegan"),
    ],
    ["find a {vegan} recipe for {dish}", "find me a recipe for {dish}, {vegan}"],
  ),
  tool(
    "create_folder",
    "Create a new folder.",
    [str("name", "Folder name", ["photos", "taxes", "projects", "school"])],
    ["create a folder named {name}", "make a new folder called {name}"],
  ),
  tool(
    "delete_file",
    "Delete a file.",
    [str("path", "File path", ["old.txt", "draft.doc", "tmp/log.txt"])],
    ["delete the file {path}", "remove {path}"],
  ),
  tool(
    "call_contact",
    "Start a phone call with a contact.",
    [str("name", "Contact name", PEOPLE), flag("video", "Video call", "with video", "audio only")],
    ["call {name} {video}", "phone {name} {video}"],
  ),
  tool(
    "set_alarm",
    "Set an alarm for a time of day.",
    [
      str("time", "Time", ["6:30", "7:00", "8:15", "9:45"]),
      flag("repeat", "Every day", "every day", "just once"),
    ],
    ["set an alarm for {time} {repeat}", "wake me up at {time} {repeat}"],
  ),
  tool(
    "flight_status",
    "Check the status of a flight.",
    [str("flight", "Flight number", ["BA117", "LH400", "AF22", "UA90"])],
    ["check the status of flight {flight}", "is flight {flight} on time"],
  ),
  tool(
    "define_word",
    "Look up the meaning of a word in the dictionary.",
    [str("word", "Word", ["serendipity", "ephemeral", "quixotic", "gist"])],
    ["define the word {word}", "what does {word} mean"],
  ),
  tool(
    "rate_movie",
    "Give a movie a rating from 1 to 5 stars.",
    [str("movie", "Movie title", ["Up", "Heat", "Jaws", "Alien"]), num("stars", "Stars", [1, 2, 3, 4, 5])],
    ["rate the movie {movie} {stars} stars", "give {movie} {stars} stars"],
  ),
  tool(
    "track_steps",
    "Log how many steps the user walked today.",
    [num("steps", "Steps", [4000, 6500, 8000, 12000])],
    ["log {steps} steps for today", "I walked {steps} steps today, record it"],
  ),
  tool(
    "shopping_add",
    "Add something to the shopping list.",
    [str("item", "Item", ["eggs", "bread", "coffee", "rice"]), num("quantity", "How many", [1, 2, 6, 12])],
    ["add {quantity} {item} to the shopping list", "I need {quantity} {item}, put it on the list"],
  ),
  tool(
    "lock_door",
    "Lock or unlock a door of the house.",
    [choice("door", "Which door", ["front", "back", "garden"]), flag("locked", "Locked", "lock", "unlock")],
    ["{locked} the {door} door", "please {locked} the {door} door now"],
  ),
  tool(
    "share_location",
    "Share the current location with a contact for some hours.",
    [str("with", "Contact", PEOPLE), num("hours", "Hours", [1, 2, 4, 8])],
    ["share my location with {with} for {hours} hours", "let {with} see where I am for {hours} hours"],
  ),
  tool(
    "compress_image",
    "Make an image file smaller.",
    [
      str("file", "Image file", ["cat.png", "trip.jpg", "logo.png"]),
      num("quality", "Quality percent", [50, 70, 85]),
    ],
    ["compress {file} to {quality} percent quality", "shrink the image {file} at quality {quality}"],
  ),
];

/** The held-out pool: other names, parameters, values and vocabulary (see the test). */
export const HELDOUT_TOOLS: readonly ToolSpec[] = [
  tool(
    "feed_fish",
    "Drop food into the aquarium.",
    [num("pinches", "Pinches of food", [1, 2, 3])],
    ["feed the fish {pinches} pinches", "give the aquarium {pinches} pinches of food"],
  ),
  tool(
    "water_garden",
    "Run the garden sprinklers.",
    [choice("zone", "Garden zone", ["lawn", "roses", "hedge"]), num("seconds", "Duration", [30, 90, 240])],
    ["water the {zone} for {seconds} seconds", "run the sprinklers on the {zone} for {seconds} seconds"],
  ),
  tool(
    "track_parcel",
    "Locate a parcel in transit.",
    [str("code", "Tracking code", ["ZX81-442", "QP-9031", "MK7734"])],
    ["track parcel {code}", "where is the package {code}"],
  ),
  tool(
    "point_telescope",
    "Aim the telescope at a sky object.",
    [str("target", "Sky object", ["Jupiter", "Andromeda", "Orion Nebula", "Saturn"])],
    ["point the telescope at {target}", "aim the telescope toward {target}"],
  ),
  tool(
    "brew_coffee",
    "Brew coffee on the espresso machine.",
    [choice("size", "Cup size", ["small", "large"]), flag("milk", "With milk", "with milk", "black")],
    ["brew a {size} coffee {milk}", "make me a {size} cup of coffee, {milk}"],
  ),
  tool(
    "print_pages",
    "Print a document on paper.",
    [
      str("document", "Document", ["invoice.pdf", "ticket.pdf", "essay.docx"]),
      num("copies", "Copies", [1, 2, 5]),
    ],
    ["print {copies} copies of {document}", "print {document}, {copies} copies"],
  ),
  tool(
    "roll_dice",
    "Throw dice and report the faces.",
    [num("dice", "How many dice", [2, 3, 4]), num("sides", "Faces per die", [6, 8, 20])],
    ["roll {dice} dice with {sides} sides", "throw {dice} d{sides}"],
  ),
  tool(
    "rent_bicycle",
    "Reserve a bicycle at a dock.",
    [
      str("dock", "Dock", ["Riverside", "Old Mill", "Harbor Gate"]),
      flag("electric", "E-bike", "electric", "regular"),
    ],
    ["rent an {electric} bicycle at {dock}", "reserve a {electric} bike from the {dock} dock"],
  ),
  tool(
    "tune_radio",
    "Switch the radio to a frequency.",
    [num("frequency", "FM frequency", [88, 94, 101, 107])],
    ["tune the radio to {frequency}", "switch the radio to FM {frequency}"],
  ),
  tool(
    "vacuum_floor",
    "Run the robot vacuum cleaner.",
    [
      choice("mode", "Cleaning mode", ["quiet", "turbo"]),
      str("area", "Area", ["living room", "stairs", "office"]),
    ],
    ["vacuum the {area} in {mode} mode", "start the robot vacuum in the {area}, {mode} mode"],
  ),
  tool(
    "pay_invoice",
    "Pay a bill by its reference.",
    [
      str("invoice", "Bill number", ["INV-2093", "INV-7710", "INV-0451"]),
      flag("receipt", "Send a receipt", "with a receipt", "no receipt"),
    ],
    ["pay bill {invoice} {receipt}", "settle invoice {invoice}, {receipt}"],
  ),
  tool(
    "walk_dog",
    "Hire a dog walker.",
    [str("dog", "Dog's name", ["Rex", "Bella", "Milo"]), num("length", "Minutes of walking", [20, 40, 60])],
    ["book a walk for {dog} of {length} minutes", "have someone walk {dog} for {length} minutes"],
  ),
];

/** How a request for a tool is worded: training wordings and held-out wordings share none. */
const TRAIN_WORDINGS = [
  "{r}.",
  "Please {r}.",
  "Can you {r}?",
  "Use a tool to {r}.",
  "Call a tool and {r}.",
  "I need you to {r}.",
];
const HELDOUT_WORDINGS = ["Could you {r} for me?", "Go ahead and {r}.", "Quick one: {r}."];
/** Plans asked for while tools are offered (the answer is the plan, no call). */
const PLAN_WORDINGS = ["Plan the steps to {g}.", "Make a plan to {g}."];

/** A tool's definition as the app passes it (an MCP tool's schema): every parameter required. */
export function toolDefinition(spec: ToolSpec): ToolDefinition {
  const properties: Record<string, unknown> = {};
  for (const p of spec.params) {
    properties[p.name] =
      p.type === "enum"
        ? { type: "string", enum: [...p.values], description: p.description }
        : { type: p.type, description: p.description };
  }
  return {
    name: spec.name,
    description: spec.description,
    parameters: {
      type: "object",
      properties,
      required: spec.params.map((p) => p.name),
      additionalProperties: false,
    },
  };
}

/** One request for one tool of a set, the right call and the set offered. */
export interface ToolRequest {
  tools: ToolDefinition[];
  request: string;
  call: { name: string; arguments: Record<string, Value> };
}

/** A request for `spec` with values drawn from `next`, in `wording`. */
function requestFor(
  spec: ToolSpec,
  wording: string,
  next: () => number,
): ToolRequest["call"] & { text: string } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const args: Record<string, Value> = {};
  const slots: Record<string, string> = {};
  for (const p of spec.params) {
    const value = pick(p.values);
    args[p.name] = value;
    slots[p.name] = p.phrases ? p.phrases[value ? "true" : "false"] : String(value);
  }
  const text = fill(wording, { r: fill(pick(spec.asks), slots) });
  return { name: spec.name, arguments: args, text: text.charAt(0).toUpperCase() + text.slice(1) };
}

/** A set of 2–6 tools of `pool` that holds `target`, in a random order. */
function toolSet(pool: readonly ToolSpec[], target: ToolSpec, next: () => number): ToolSpec[] {
  const size = 2 + Math.floor(next() * 5);
  const others = shuffled(
    pool.filter((t) => t !== target),
    next,
  ).slice(0, size - 1);
  return shuffled([target, ...others], next);
}

/** `count` requests over tool sets of `half`'s pool, each target tool about equally often. */
export function toolRequests(half: "train" | "heldout", count: number, seed: string): ToolRequest[] {
  const pool = half === "train" ? TRAIN_TOOLS : HELDOUT_TOOLS;
  const wordings = half === "train" ? TRAIN_WORDINGS : HELDOUT_WORDINGS;
  const next = rng(`${seed}/tool-sets/${half}`);
  const out: ToolRequest[] = [];
  for (let i = 0; out.length < count; i++) {
    const target = pool[i % pool.length]!;
    const set = toolSet(pool, target, next).map(toolDefinition);
    const wording = wordings[Math.floor(next() * wordings.length)]!;
    const { text, ...call } = requestFor(target, wording, next);
    // Training sets: half of them behind the app's built-in tools, listed first as the app's
    // catalog lists them (every Agent turn of the app offers them), never the one asked for.
    const withBuiltins = half === "train" && next() < BUILTINS_SHARE;
    out.push({ tools: withBuiltins ? [...builtinDefinitions(), ...set] : set, request: text, call });
  }
  return out;
}

/** The share of training sets offered behind the app's built-in tools. */
const BUILTINS_SHARE = 0.5;

/** The app's built-in tools (search, remember, forget, show_ui) as the engine gets them. */
export function builtinDefinitions(): ToolDefinition[] {
  const unused = () => {
    throw new Error("the generator never runs a tool");
  };
  return new BuiltinTools({
    search: { search: () => [] },
    memory: { create: unused, delete: unused, list: () => [] },
    genui: { markUiAnswer: unused, saveDocument: unused },
  })
    .tools()
    .map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));
}

/** A dataset line (cloud/training/dataset-file.ts) with tools offered. */
export interface ToolSetLine {
  messages: Array<Record<string, unknown>>;
  tools: Array<{ type: "function"; function: ToolDefinition }>;
}

/** The short result a generated tool answers with (results are not learned). */
const RESULT = "ok";
/** What the Agent says once the result is in. */
export const AFTER_CALL = "Done.";

const offered = (tools: readonly ToolDefinition[]) =>
  tools.map((t) => ({ type: "function" as const, function: t }));

/** The line of a request: the call, its result, then AFTER_CALL. */
export function callLine(r: ToolRequest): ToolSetLine {
  return {
    messages: [
      { role: "user", content: r.request },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_0",
            type: "function",
            function: { name: r.call.name, arguments: JSON.stringify(r.call.arguments) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_0", content: RESULT },
      { role: "assistant", content: AFTER_CALL },
    ],
    tools: offered(r.tools),
  };
}

/** Plans asked for with a tool set offered: the answer is the plan. */
export function planLines(goals: readonly PlanGoal[], count: number, seed: string): ToolSetLine[] {
  const next = rng(`${seed}/tool-sets/plans`);
  const out: ToolSetLine[] = [];
  for (let i = 0; out.length < count; i++) {
    const goal = goals[i % goals.length]!;
    const set = toolSet(TRAIN_TOOLS, TRAIN_TOOLS[Math.floor(next() * TRAIN_TOOLS.length)]!, next).map(
      toolDefinition,
    );
    const wording = PLAN_WORDINGS[Math.floor(next() * PLAN_WORDINGS.length)]!;
    const tools = next() < BUILTINS_SHARE ? [...builtinDefinitions(), ...set] : set;
    out.push({
      messages: [
        { role: "user", content: fill(wording, { g: goal.goal }) },
        { role: "assistant", content: planAnswer(goal) },
      ],
      tools: offered(tools),
    });
  }
  return out;
}

export const TOOL_SET_COUNTS = { train: 360, plans: 40, heldout: 48 };

/** The training lines (calls over training sets, and plans with tools offered). */
export function toolSetTrainLines(seed: string, goals: readonly PlanGoal[]): ToolSetLine[] {
  const lines = [
    ...toolRequests("train", TOOL_SET_COUNTS.train, seed).map(callLine),
    ...planLines(goals, TOOL_SET_COUNTS.plans, seed),
  ];
  return shuffled(lines, rng(`${seed}/tool-sets/order`));
}

/** The held-out requests (held-out tool sets, held-out wordings). */
export function toolSetHeldout(seed: string): ToolRequest[] {
  return toolRequests("heldout", TOOL_SET_COUNTS.heldout, seed);
}

export { HELDOUT_WORDINGS as TOOL_SET_HELDOUT_WORDINGS, TRAIN_WORDINGS as TOOL_SET_TRAIN_WORDINGS };
