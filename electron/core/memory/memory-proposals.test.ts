/**
 * Which proposals are worth showing (issue 30, item 2): only for messages in which the user
 * says something about themselves, and only facts built from the user's own words. What the
 * tiny demo wrote after ~40 turns ("teachend", "g", "1,") fails; a fact restating the user passes.
 */
import { describe, expect, it } from "vitest";
import { proposalWorthKeeping, statesAboutUser } from "./memory-text";

describe("statesAboutUser", () => {
  it.each([
    "I live in Oslo",
    "My name is Ana and I prefer tea.",
    "i'm vegetarian",
    "Call me Sam. Write a poem about the sea",
    "Write a poem about the sea. I love haiku.",
    "i use neovim, not vscode",
    "Im training for a half marathon",
    "ive got two dogs",
  ])("%s: yes", (text) => expect(statesAboutUser(text)).toBe(true));

  it.each([
    "Write a poem about the sea",
    "How do I sort a list in Python?",
    "for i in range(10): print(i)",
    "set i = 0 then loop",
    "what does the i in iPhone mean",
    "an image named Im.png",
    "tell me a joke",
    "Explain this file\n\n```notes.txt\nI live in Oslo and my cat is Miso\n```",
    "",
  ])("%s: no", (text) => expect(statesAboutUser(text)).toBe(false));
});

describe("proposalWorthKeeping", () => {
  const user = "I have two cats and I live in Oslo. My favourite drink is green tea.";
  it.each(["The user lives in Oslo", "The user has two cats", "The user's favourite drink is green tea"])(
    "keeps %s",
    (fact) => expect(proposalWorthKeeping(fact, user)).toBe(true),
  );

  it.each([
    "teachend",
    "g",
    "1,",
    "The user teachend the ocean", // a word the user never wrote
    "Oslo cats tea", // not about the user
    "The user 1 2 3 4 5 6", // mostly not words
    "The user", // no fact at all
    "The user lives in Paris and teaches", // two of three content words made up
  ])("drops %s", (fact) => expect(proposalWorthKeeping(fact, user)).toBe(false));

  // How a model that can do the task restates chat-style messages.
  it.each([
    ["The user uses neovim, not vscode", "i use neovim, not vscode, so skip the vscode instructions"],
    [
      "The user prefers celsius and metric units",
      "i'm in Lisbon so use celsius and metric for everything please",
    ],
    [
      "The user's daughter Mei is allergic to tree nuts",
      "my daughter Mei is allergic to tree nuts so skip those",
    ],
  ])("keeps %s", (fact, said) => expect(proposalWorthKeeping(fact, said)).toBe(true));
});
