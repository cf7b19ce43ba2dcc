/** Plain text of a hast node or React children, for copy buttons and link labels. */
import { isValidElement } from "react";
import type { ReactNode } from "react";

interface HastLike {
  type: string;
  value?: string;
  children?: HastLike[];
}

export function textOf(value: unknown): string {
  if (value === null || value === undefined || typeof value === "boolean") return "";
  if (typeof value === "string" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.map(textOf).join("");
  if (isValidElement(value)) return textOf((value.props as { children?: ReactNode }).children);
  if (typeof value === "object" && "type" in value) {
    const node = value as HastLike;
    if (node.type === "text") return node.value ?? "";
    return (node.children ?? []).map(textOf).join("");
  }
  return "";
}
