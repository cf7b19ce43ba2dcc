/**
 * User text to FTS5 queries, and FTS5 snippets to plain parts. User input never reaches
 * FTS5's query syntax: every term is quoted, so `AND`, `NEAR(`, `col:` or a lone `"` are
 * just words.
 */

/** Most terms a query keeps: a pasted paragraph must not become a huge query. */
const MAX_TERMS = 16;

/** Marks the start and end of a match in snippet() output: Unicode noncharacters. */
export const MATCH_OPEN = "\uFDD0";
export const MATCH_CLOSE = "\uFDD1";

/** Whitespace-separated words that hold at least one letter or digit (others index as nothing). */
export function queryTerms(text: string, max = MAX_TERMS): string[] {
  return text
    .normalize("NFC")
    .split(/\s+/u)
    .filter((t) => /[\p{L}\p{N}]/u.test(t))
    .slice(0, max);
}

/** `term` as one FTS5 string: a phrase of its words, nothing in it read as syntax. */
export function quote(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/**
 * Every term must match (implicit AND); the last one also as a prefix, so that results come
 * while the user is still typing ("pas" finds "pasta"). Null when the text has no words.
 */
export function searchQuery(text: string): string | null {
  const phrases = searchPhrases(text);
  return phrases.length === 0 ? null : phrases.join(" ");
}

/** The phrases searchQuery() joins, one per term (the last one a prefix); empty without words. */
export function searchPhrases(text: string): string[] {
  const terms = queryTerms(text);
  return terms.map((t, i) => (i === terms.length - 1 ? `${quote(t)}*` : quote(t)));
}

/** Any term may match (OR), best ranked by bm25: candidates for memory retrieval. */
export function anyTermQuery(text: string, max = 32): string | null {
  const seen = new Set<string>();
  const terms = queryTerms(text, 256)
    .map((t) => t.toLowerCase())
    .filter((t) => !seen.has(t) && seen.add(t))
    .slice(0, max);
  if (terms.length === 0) return null;
  return terms.map(quote).join(" OR ");
}

export interface SnippetPart {
  text: string;
  match: boolean;
}

/** Split snippet()/highlight() output made with MATCH_OPEN/MATCH_CLOSE into plain parts. */
export function snippetParts(marked: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, match: boolean): void => {
    if (!text) return;
    const last = parts.at(-1);
    if (last && last.match === match) last.text += text;
    else parts.push({ text, match });
  };
  let match = false;
  let current = "";
  for (const ch of marked) {
    if (ch === MATCH_OPEN || ch === MATCH_CLOSE) {
      push(current, match);
      current = "";
      match = ch === MATCH_OPEN;
    } else {
      current += ch;
    }
  }
  push(current, match);
  return parts;
}
