const MAX_TITLE = 40;

/** A conversation title from the first user message: one line, about 40 characters, cut at a word. */
export function titleFromMessage(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= MAX_TITLE) return flat;
  const cut = flat.slice(0, MAX_TITLE);
  const lastSpace = cut.lastIndexOf(" ");
  // Cut at a word boundary unless that would leave too little of the text.
  const base = lastSpace >= MAX_TITLE / 2 ? cut.slice(0, lastSpace) : cut;
  return `${base.trimEnd()}…`;
}
