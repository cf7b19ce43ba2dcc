/**
 * The tool-call card rendered to HTML (React's server renderer, no DOM needed): what each state
 * shows, and that a tool's result is text however it is written.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ToolStep } from "../../../electron/api";
import { TOOL_RESULT_MAX_CHARS } from "../../../electron/api";
import { ControllerProvider } from "../app/controller-context";
import { AppController } from "../state/app-controller";
import { ScriptedApi } from "../testing/scripted-api";
import { ToolSteps } from "./ToolStepCard";

function step(over: Partial<ToolStep> & Pick<ToolStep, "id">): ToolStep {
  return {
    messageId: "a1",
    index: 0,
    server: "fixture",
    tool: "set_timer",
    arguments: { minutes: 15 },
    state: "done",
    decision: "once",
    result: "Timer set for 15 minutes.",
    truncated: false,
    error: null,
    durationMs: 21,
    createdAt: 10,
    ...over,
  };
}

function render(steps: ToolStep[]): string {
  const controller = new AppController(new ScriptedApi({}));
  try {
    return renderToStaticMarkup(
      <ControllerProvider controller={controller}>
        <ToolSteps conversationId="c1" steps={steps} />
      </ControllerProvider>,
    );
  } finally {
    controller.dispose();
  }
}

describe("ToolSteps", () => {
  it("asks while pending: the tool, its server, the arguments and three answers", () => {
    const html = render([
      step({ id: "s1", state: "pending", decision: null, result: null, durationMs: null }),
    ]);
    expect(html).toContain('aria-label="Tool call set_timer (fixture)"');
    expect(html).toContain("Waiting for your permission");
    expect(html).toContain("&quot;minutes&quot;: 15");
    expect(html).toMatch(/Allow <code>set_timer<\/code> from fixture to run with these arguments\?/);
    for (const label of ["Allow once", "Always allow", "Deny"]) expect(html).toContain(`>${label}</button>`);
    expect(html).not.toContain("ms</span>");
  });

  it("shows a result as text, never as markup, with its duration and decision", () => {
    const hostile = '<img src=x onerror="alert(1)"> **bold** [link](javascript:alert(1))';
    const html = render([
      step({ id: "s1", result: hostile, server: "builtin", tool: "search_conversations" }),
    ]);
    expect(html).toContain("built-in");
    expect(html).toContain("Allowed once");
    expect(html).toContain("21 ms");
    expect(html).toContain(
      "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; **bold** [link](javascript:alert(1))",
    );
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<strong>");
    expect(html).not.toContain("<a ");
  });

  it("folds a long result behind Show all and marks one core cut", () => {
    const long = "0123456789".repeat(200);
    const html = render([step({ id: "s1", result: long, truncated: true })]);
    expect(html).toContain(`Show all (${(2000).toLocaleString()} characters)`);
    expect(html).toContain('aria-expanded="false"');
    expect(html).not.toContain(long);
    expect(html).toContain(`the model saw the first ${TOOL_RESULT_MAX_CHARS.toLocaleString()} characters`);
  });

  it("says why nothing ran: denied, stopped, invalid arguments, a failed call", () => {
    const html = render([
      step({ id: "d", state: "denied", decision: "deny", result: null, durationMs: null }),
      step({ id: "s", index: 1, state: "stopped", decision: null, result: null, durationMs: null }),
      step({
        id: "i",
        index: 2,
        state: "invalid",
        decision: null,
        result: null,
        arguments: '{"minutes": "soon"}',
        error: "minutes must be integer",
      }),
      step({ id: "e", index: 3, state: "error", result: null, error: "Timed out after 60 s" }),
    ]);
    expect(html).toContain("Not called: you denied it.");
    expect(html).toContain("Stopped before you answered; not called.");
    expect(html).toContain("nothing was called: minutes must be integer");
    expect(html).toContain("{&quot;minutes&quot;: &quot;soon&quot;}");
    expect(html).toMatch(/role="alert"[^>]*>Timed out after 60 s</);
    expect(html).not.toContain("Allow once");
  });

  it("renders nothing for an answer without calls", () => {
    expect(render([])).toBe("");
  });
});
