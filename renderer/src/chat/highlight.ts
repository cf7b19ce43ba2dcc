/**
 * Syntax highlighting of fenced code in answers: lowlight (highlight.js grammars, output as a
 * syntax tree, never HTML strings) with a small set of languages, so the bundle carries only
 * what answers commonly use. Only a fence that names a language is highlighted: guessing the
 * language (highlightAuto) runs every grammar over the code.
 */
import { createLowlight } from "lowlight";
import type { Element, Root, RootContent } from "hast";
import { createElement, Fragment, type ReactNode } from "react";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const lowlight = createLowlight({
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
});

/** Longest code block highlighted (the whole answer is already capped by markdown-limits). */
export const HIGHLIGHT_MAX_CHARS = 20_000;

/** Whether `language` (a fence's name or alias: ts, py, sh, html…) has a grammar here. */
export function canHighlight(language: string | null): language is string {
  return language !== null && lowlight.registered(language.toLowerCase());
}

function toReact(node: RootContent | Root, key: number): ReactNode {
  if (node.type === "text") return node.value;
  if (node.type === "element") return element(node, key);
  if (node.type === "root") return createElement(Fragment, { key }, ...node.children.map(toReact));
  return null;
}

/** lowlight emits only <span class="hljs-…">: the class is the one property carried over. */
function element(node: Element, key: number): ReactNode {
  const className = Array.isArray(node.properties.className)
    ? node.properties.className.map(String).join(" ")
    : undefined;
  return createElement("span", { key, className }, ...node.children.map(toReact));
}

/**
 * `code` as highlighted React nodes, or null when there is no grammar for `language`, the code
 * is too long, or the grammar throws (the caller then shows the plain text).
 */
export function highlightCode(code: string, language: string | null): ReactNode | null {
  if (!canHighlight(language) || code.length > HIGHLIGHT_MAX_CHARS) return null;
  try {
    return toReact(lowlight.highlight(language.toLowerCase(), code), 0);
  } catch {
    return null;
  }
}
