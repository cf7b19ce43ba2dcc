import { describe, expect, it } from "vitest";
import { checkAssertion } from "./assertions";
import type { Assertion } from "./contract-schema";

type Checked = Exclude<Assertion, { type: "regression" | "unitTests" }>;
const run = (a: Checked, output: string, stopReason: "eos" | "maxTokens" | "stop" | null = "eos") =>
  checkAssertion(a, { output, adapters: ["x"], latencyMs: 1, stopReason });

const BUTTON =
  '{"version":1,"blocks":[{"kind":"ui","root":{"type":"Button","id":"b1","props":{"label":"Save","action":"save","variant":null}}}]}';

describe("task assertions", () => {
  it("mentions with beyondPrompt fails an answer that restates the prompt or adds too little", () => {
    const a: Checked = {
      type: "mentions",
      terms: [["hot"], ["chocolat"]],
      min: 1,
      beyondPrompt: { prompt: "Share your view on hot chocolate, please.", minNewWords: 2 },
    };
    const echo = run(a, "Share your view on hot chocolate, please.");
    expect(echo.passed).toBe(false);
    expect(echo.detail).toMatch(/^restates the prompt \(100% of its words are the prompt's\)/);
    expect(run(a, "hot chocolate.").detail).toMatch(/^restates the prompt/);
    expect(run(a, "Hot chocolate, yum.").detail).toMatch(
      /^adds 1 content word to the prompt \(yum\), needs 2/,
    );
    const right = run(a, "Hot chocolate is the perfect warm treat on a cold evening.");
    expect(right.passed).toBe(true);
    expect(right.detail).toMatch(/adds 5 content words to the prompt$/);
    // The key terms are still required: new words about something else do not pass.
    expect(run(a, "Lemonade is the perfect cool treat on a summer afternoon.").detail).toMatch(
      /^mentions 0 of 2 key terms/,
    );
  });

  it("genuiContains with prompt fails a document that copies the prompt into a text", () => {
    const a: Checked = {
      type: "genuiContains",
      component: "Button",
      texts: ["Save"],
      numbers: [],
      prompt: "Make a Save button, please.",
    };
    expect(run(a, BUTTON).passed).toBe(true);
    const copied = BUTTON.replace('"label":"Save"', '"label":"Make a Save button, please."');
    expect(run(a, copied).detail).toBe(
      'restates the prompt in a text of the document: "make a save button, please."',
    );
  });

  it("maxChars counts characters (code points)", () => {
    expect(run({ type: "maxChars", max: 3 }, "abc").passed).toBe(true);
    expect(run({ type: "maxChars", max: 3 }, "🙂🙂🙂").passed).toBe(true);
    expect(run({ type: "maxChars", max: 3 }, "abcd")).toMatchObject({
      passed: false,
      detail: "4 characters, more than 3",
    });
  });

  it("stopsOnItsOwn passes only an answer that ended at its end of turn", () => {
    expect(run({ type: "stopsOnItsOwn" }, "x", "eos").passed).toBe(true);
    expect(run({ type: "stopsOnItsOwn" }, "x", "maxTokens")).toMatchObject({
      passed: false,
      detail: "cut off at maxTokens: it did not end on its own",
    });
    expect(run({ type: "stopsOnItsOwn" }, "x", "stop").passed).toBe(false);
    expect(run({ type: "stopsOnItsOwn" }, "x", null).passed).toBe(false);
  });

  it("plainText refuses code blocks, JSON, empty answers and (singleLine) several lines", () => {
    const a: Checked = { type: "plainText", singleLine: true };
    expect(run(a, "Cats are lovely, curious companions.").passed).toBe(true);
    expect(run(a, "{not json, just a brace").passed).toBe(true);
    expect(run(a, "Here:\n```js\nx\n```").detail).toMatch(/code block/);
    expect(run(a, '{"a":1}').detail).toMatch(/is JSON/);
    expect(run(a, "[1, 2]").detail).toMatch(/is JSON/);
    expect(run(a, "  ").detail).toBe("empty answer");
    expect(run(a, "one\ntwo").detail).toMatch(/more than one line/);
    expect(run({ type: "plainText" }, "one\ntwo").passed).toBe(true);
  });

  it("codeBlock wants a fenced block with a language tag, and that language when given", () => {
    const js = "Here you go:\n```js\nfunction add(a, b) {\n  return a + b;\n}\n```";
    expect(run({ type: "codeBlock" }, js)).toMatchObject({ passed: true, detail: "a js code block" });
    expect(run({ type: "codeBlock", language: "javascript" }, js).passed).toBe(true);
    expect(run({ type: "codeBlock", language: "python" }, js)).toMatchObject({
      passed: false,
      detail: "a js code block, expected python",
    });
    expect(run({ type: "codeBlock", language: "py" }, "```python\ndef f():\n    pass\n```").passed).toBe(
      true,
    );
    expect(run({ type: "codeBlock" }, "```\nx = 1\n```").detail).toBe("the code block has no language tag");
    expect(run({ type: "codeBlock" }, "```js\n\n```").detail).toBe("the code block is empty");
    expect(run({ type: "codeBlock" }, "function add(a, b) { return a + b; }").detail).toMatch(/no fenced/);
    expect(run({ type: "codeBlock" }, "```js\nunterminated").passed).toBe(false);
  });

  it("genuiDocument uses the app's validator: valid, nothing invalid, the expected component", () => {
    expect(run({ type: "genuiDocument" }, BUTTON)).toMatchObject({
      passed: true,
      detail: "a valid UI document: Button",
    });
    expect(run({ type: "genuiDocument", components: ["Form", "Button"] }, BUTTON).passed).toBe(true);
    expect(run({ type: "genuiDocument", components: ["Table"] }, BUTTON)).toMatchObject({
      passed: false,
      detail: "shows Button, expected Table",
    });
    // A node the catalog refuses would render as an inert stand-in: that fails.
    expect(
      run({ type: "genuiDocument" }, BUTTON.replace('"action":"save"', '"action":"no spaces!"')).detail,
    ).toMatch(/not valid for the catalog: b1: action/);
    expect(run({ type: "genuiDocument" }, BUTTON.replace('"Button"', '"Marquee"')).detail).toMatch(
      /not in the catalog/,
    );
    expect(run({ type: "genuiDocument" }, BUTTON.slice(0, 60)).detail).toMatch(/not valid JSON/);
    expect(
      run({ type: "genuiDocument" }, '{"version":1,"blocks":[{"kind":"text","markdown":"hi"}]}').detail,
    ).toBe("a UI document without any component");
    expect(run({ type: "genuiDocument" }, '{"blocks":"x"}').detail).toMatch(/not a UI document/);
  });

  it("numberedPlan wants only consecutive numbered steps, between minSteps and maxSteps", () => {
    const plan = "1. Pack.\n2. Move.\n3. Unpack.";
    const a: Checked = { type: "numberedPlan", minSteps: 3, maxSteps: 4 };
    expect(run(a, plan)).toMatchObject({ passed: true, detail: "a plan of 3 steps" });
    expect(run(a, `${plan}\n`).passed).toBe(true);
    expect(run(a, "1. Pack.\n2. Move.").detail).toBe("2 step(s), expected at least 3");
    expect(run(a, `${plan}\n4. Rest.\n5. Sleep.`).detail).toBe("5 steps, expected at most 4");
    expect(run(a, "1. Pack.\n3. Move.\n4. Unpack.").detail).toBe("step 2 is numbered 3");
    expect(run(a, `Sure!\n${plan}`).detail).toMatch(/line 1 is not a numbered step/);
    expect(run(a, "1.Pack.\n2. Move.\n3. Unpack.").passed).toBe(false);
  });

  it("toolCall wants exactly {tool, arguments}, the expected tool and its arguments", () => {
    const call = '{"tool":"get_weather","arguments":{"city":"Oslo"}}';
    const a: Checked = { type: "toolCall", tool: "get_weather", arguments: ["city"] };
    expect(run(a, call)).toMatchObject({ passed: true, detail: "calls get_weather" });
    expect(run({ type: "toolCall" }, ` ${call}\n`).passed).toBe(true);
    expect(run({ ...a, tool: "search_web" }, call).detail).toBe("calls get_weather, expected search_web");
    expect(run({ ...a, arguments: ["city", "day"] }, call).detail).toBe(
      "get_weather without argument(s) day",
    );
    expect(run(a, '{"tool":"get_weather","arguments":{"city":"Oslo"},"why":"x"}').detail).toMatch(/exactly/);
    expect(run(a, '{"name":"get_weather","parameters":{}}').detail).toMatch(/exactly/);
    expect(run(a, '{"tool":"Get Weather","arguments":{}}').detail).toMatch(/bad tool name/);
    expect(run(a, '{"tool":"get_weather","arguments":"Oslo"}').detail).toMatch(/must be an object/);
    expect(run(a, "I would call get_weather").detail).toMatch(/not a JSON tool call/);
    expect(run(a, "[1]").detail).toMatch(/not a JSON object/);
  });
});
