/**
 * Deepest nesting of arrays/objects in JSON text, counted without parsing (strings skipped), so
 * that text can be refused before JSON.parse builds a deep structure: GenUI specs
 * (electron/api/genui/validate.ts) and import files (electron/core/conversations/export-format.ts).
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}
