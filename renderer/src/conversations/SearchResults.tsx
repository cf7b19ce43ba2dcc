import { useMemo } from "react";
import type { SearchHit } from "../../../electron/api";
import { hashForConversation } from "../app/hash-route";
import { groupByConversation } from "./search-results-logic";

/**
 * Search matches, one per conversation: a link to it with the matching words marked in its
 * title and in its best matching message. The snippet arrives as plain parts; matches become
 * <mark> elements, never HTML strings.
 */
export function SearchResults({ hits, currentId }: { hits: readonly SearchHit[]; currentId: string | null }) {
  const results = useMemo(() => groupByConversation(hits), [hits]);
  return (
    <ul className="search-results" aria-label="Search results">
      {results.map((r) => (
        <li key={r.conversationId} className="search-hit">
          <a
            className="search-hit__link"
            href={hashForConversation(r.conversationId)}
            aria-current={r.conversationId === currentId ? "page" : undefined}
          >
            <span className="search-hit__title">
              {r.titleParts && r.titleParts.length > 0 ? (
                <Snippet parts={r.titleParts} />
              ) : (
                r.title || "Untitled"
              )}
            </span>
            {r.message && r.message.snippet.length > 0 && (
              <span className="search-hit__snippet">
                {r.message.role && (
                  <span className="visually-hidden">{r.message.role === "user" ? "You: " : "Macaron: "}</span>
                )}
                <Snippet parts={r.message.snippet} />
              </span>
            )}
          </a>
        </li>
      ))}
    </ul>
  );
}

function Snippet({ parts }: { parts: SearchHit["snippet"] }) {
  return (
    <>
      {parts.map((part, i) =>
        part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
      )}
    </>
  );
}
