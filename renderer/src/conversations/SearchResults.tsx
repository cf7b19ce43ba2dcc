import type { SearchHit } from "../../../electron/api";
import { hashForConversation } from "../app/hash-route";

/**
 * Search matches: each a link to its conversation with the matching words marked. The snippet
 * arrives as plain parts; matches become <mark> elements, never HTML strings.
 */
export function SearchResults({ hits, currentId }: { hits: readonly SearchHit[]; currentId: string | null }) {
  return (
    <ul className="search-results" aria-label="Search results">
      {hits.map((hit, i) => (
        <li key={`${hit.conversationId}:${hit.messageId ?? "title"}:${i}`} className="search-hit">
          <a
            className="search-hit__link"
            href={hashForConversation(hit.conversationId)}
            aria-current={hit.conversationId === currentId ? "page" : undefined}
          >
            <span className="search-hit__title">{hit.conversationTitle || "Untitled"}</span>
            {hit.snippet.length > 0 && (
              <span className="search-hit__snippet">
                {hit.role && (
                  <span className="visually-hidden">{hit.role === "user" ? "You: " : "Macaron: "}</span>
                )}
                <Snippet parts={hit.snippet} />
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
