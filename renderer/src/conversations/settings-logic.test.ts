import { describe, expect, it } from "vitest";
import {
  defaultLabel,
  formFrom,
  formProblem,
  samplingLines,
  settingsFrom,
  systemPromptLabel,
} from "./settings-logic";

describe("settings-logic", () => {
  it("a blank prompt is the app's and empty fields are left out, both ways", () => {
    expect(settingsFrom({ systemPrompt: "  \n", sampling: { temperature: Number.NaN, seed: 3 } })).toEqual({
      systemPrompt: null,
      sampling: { seed: 3 },
    });
    const settings = { systemPrompt: "Be brief.", sampling: { topP: 0.9, maxTokens: 64 } };
    expect(settingsFrom(formFrom(settings))).toEqual(settings);
    expect(formFrom({ systemPrompt: null, sampling: {} })).toEqual({ systemPrompt: "", sampling: {} });
  });

  it("names the first problem: a range, a whole number, the model's context", () => {
    const form = (sampling: Record<string, number>) => ({ systemPrompt: "", sampling });
    expect(formProblem(form({ temperature: 0.7, maxTokens: 512 }), 512)).toBeNull();
    expect(formProblem(form({ temperature: 2.1 }), null)).toBe("Temperature must be between 0 and 2.");
    expect(formProblem(form({ repeatPenalty: 0.9 }), null)).toBe("Repeat penalty must be between 1 and 2.");
    expect(formProblem(form({ topK: 1.5 }), null)).toBe("Top-k must be a whole number.");
    expect(formProblem(form({ maxTokens: 513 }), 512)).toBe(
      "Max tokens must be between 1 and the model's context size (512).",
    );
    // No model loaded: the context is checked by core at the next turn.
    expect(formProblem(form({ maxTokens: 4096 }), null)).toBeNull();
    expect(formProblem({ systemPrompt: "x".repeat(20_001), sampling: {} }, null)).toMatch(/at most 20,000/);
  });

  it("the answer record lists what was used, in a fixed order", () => {
    const generation = {
      sampling: { seed: 42, maxTokens: 40, temperature: 0.7, topP: 0.95, repeatPenalty: 1.1 },
      systemPrompt: "Arr.",
    };
    expect(samplingLines(generation).map((l) => `${l.label} ${l.value}`)).toEqual([
      "Temperature 0.7",
      "Top-p 0.95",
      "Repeat penalty 1.1",
      "Max tokens 40",
      "Seed 42",
    ]);
    expect(systemPromptLabel(generation)).toBe("System prompt: custom");
    expect(systemPromptLabel({ sampling: {}, systemPrompt: null })).toBe("System prompt: default");
  });
});

describe("defaultLabel (an empty sampling field)", () => {
  it("says what the default is, from the last answer's sampling when known", () => {
    expect(defaultLabel("temperature")).toBe("Default (0.7)");
    expect(defaultLabel("temperature", { temperature: 0 })).toBe("Default (0)");
    expect(defaultLabel("maxTokens", { maxTokens: 256 })).toBe("Default (256)");
    expect(defaultLabel("topK")).toBe("Default (40)");
    expect(defaultLabel("seed", { seed: 7 })).toBe("Default (random)");
  });
});
