/** The open conversation lives in the URL hash (`#/c/<id>`) so a reload reopens it. */

export function conversationIdFromHash(hash: string): string | null {
  const match = /^#\/c\/([^/?#]+)$/.exec(hash);
  if (!match) return null;
  try {
    const id = decodeURIComponent(match[1]!);
    return id.length > 0 && id.length <= 64 ? id : null;
  } catch {
    return null;
  }
}

export function hashForConversation(id: string | null): string {
  return id ? `#/c/${encodeURIComponent(id)}` : "#/";
}
