/** An answer's record of what it was generated with (MessageStats.GenerationSettings). */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { GenerationSettings } from "../chat/MessageStats";

describe("GenerationSettings", () => {
  it("lists the sampling; a custom system prompt is a disclosure with its text", () => {
    const html = renderToStaticMarkup(
      <GenerationSettings
        generation={{
          sampling: { temperature: 0.7, maxTokens: 40, seed: 42 },
          systemPrompt: "Be <b>brief</b>.",
        }}
      />,
    );
    expect(html).toContain("<dd>Temperature 0.7</dd>");
    expect(html).toContain("<dd>Max tokens 40</dd>");
    expect(html).toContain("<dd>Seed 42</dd>");
    expect(html).not.toContain("Top-p");
    // Shown on demand (a closed <details>), as text: never as markup.
    expect(html).toMatch(/<details[^>]*><summary>System prompt: custom<\/summary>/);
    expect(html).toContain("Be &lt;b&gt;brief&lt;/b&gt;.");
  });

  it("the app's own prompt is one line, with nothing to open", () => {
    const html = renderToStaticMarkup(
      <GenerationSettings
        generation={{ sampling: { temperature: 0, maxTokens: 1024 }, systemPrompt: null }}
      />,
    );
    expect(html).toContain("<dd>System prompt: default</dd>");
    expect(html).not.toContain("<details");
  });
});
