/**
 * The composer's attachments: the "Attach file" button (with its hidden file input), the chips
 * (name, size, tokens, remove) and the warning when the message would not fit the context.
 * Tokens come from chat.countTokens: the loaded model's tokenizer, or an estimate (said so)
 * when no model is loaded.
 */
import { useEffect, useRef, useState } from "react";
import { formatBytes } from "../../../common/format-bytes";
import { AttachIcon, CloseIcon } from "../app/icons";
import { useAppState, useController } from "../app/controller-context";
import { attachmentBlock, composeMessage, type Attachment } from "./attachments";
import "./attachments.css";

export interface TokenCount {
  tokens: number;
  source: "tokenizer" | "estimate";
  room: number;
  contextSize: number;
}

/** Waits this long after the last keystroke before counting the whole message again. */
const RECOUNT_DELAY_MS = 300;

/**
 * Token counts of each attachment (once per file) and of the whole message (again as the
 * typed text changes, debounced). Null while counting or when the count failed.
 */
export function useTokenCounts(attachments: readonly Attachment[], text: string) {
  const api = useController().api;
  // Counts per model: another model's tokenizer counts differently, so a model change counts again.
  const model = useAppState((s) => (s.engine?.state === "ready" ? (s.engine.model?.path ?? null) : null));
  const [byId, setById] = useState<{ model: string | null; counts: Record<string, TokenCount> }>({
    model,
    counts: {},
  });
  // The whole message's count, for the attachments it was made with (a stale one is not shown).
  const [total, setTotal] = useState<{ of: readonly Attachment[]; count: TokenCount } | null>(null);
  const asked = useRef(new Map<string, string | null>());
  const currentModel = useRef(model);

  useEffect(() => {
    currentModel.current = model;
    for (const a of attachments) {
      if (asked.current.has(a.id) && asked.current.get(a.id) === model) continue;
      asked.current.set(a.id, model);
      void api.call("chat.countTokens", { text: attachmentBlock(a) }).then(
        (count) => {
          // Counted under a model that has since been replaced: the newer count is on its way.
          if (currentModel.current !== model) return;
          setById((all) => ({
            model,
            counts: { ...(all.model === model ? all.counts : {}), [a.id]: count },
          }));
        },
        () => asked.current.delete(a.id),
      );
    }
  }, [api, attachments, model]);

  useEffect(() => {
    if (attachments.length === 0) return;
    let live = true;
    const handle = setTimeout(() => {
      void api.call("chat.countTokens", { text: composeMessage(text, attachments) }).then(
        (count) => {
          if (live) setTotal({ of: attachments, count });
        },
        () => undefined,
      );
    }, RECOUNT_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(handle);
    };
  }, [api, attachments, text, model]);

  return {
    byId: byId.model === model ? byId.counts : {},
    total: total && total.of === attachments && attachments.length > 0 ? total.count : null,
  };
}

function tokensLabel(count: TokenCount | undefined): string {
  if (!count) return "counting tokens…";
  const n = count.tokens.toLocaleString("en");
  return count.source === "tokenizer" ? `${n} tokens` : `≈${n} tokens (estimate: no model loaded)`;
}

/** "Attach file": a button (keyboard reachable) that opens the hidden file input. */
export function AttachButton({ onFiles, disabled }: { onFiles: (files: File[]) => void; disabled: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        className="button button--small button--ghost composer__attach"
        disabled={disabled}
        onClick={() => input.current?.click()}
        title="Attach text or code files (or drop them here)"
      >
        <AttachIcon />
        Attach file
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-label="Attach files"
        tabIndex={-1}
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          // The same file can be picked again after it was removed.
          e.target.value = "";
          if (files.length > 0) onFiles(files);
        }}
      />
    </>
  );
}

export function AttachmentChips({
  attachments,
  counts,
  total,
  refused,
  onRemove,
  onDismissRefused,
}: {
  attachments: readonly Attachment[];
  counts: Record<string, TokenCount>;
  total: TokenCount | null;
  refused: readonly { name: string; reason: string }[];
  onRemove: (id: string) => void;
  onDismissRefused: () => void;
}) {
  if (attachments.length === 0 && refused.length === 0) return null;
  const tooLong = total !== null && total.tokens > total.room;
  return (
    <div className="attachments">
      {attachments.length > 0 && (
        <ul className="attachments__list" aria-label="Attached files">
          {attachments.map((a) => (
            <li key={a.id} className="attachment-chip">
              <span className="attachment-chip__name" title={a.name}>
                {a.name}
              </span>
              <span className="attachment-chip__meta">
                {formatBytes(a.size, { words: true })} · {tokensLabel(counts[a.id])}
              </span>
              <button
                type="button"
                className="button button--small button--ghost attachment-chip__remove"
                aria-label={`Remove ${a.name}`}
                title={`Remove ${a.name}`}
                onClick={() => onRemove(a.id)}
              >
                <CloseIcon />
              </button>
            </li>
          ))}
        </ul>
      )}
      {tooLong && (
        <p className="attachments__warning" role="alert">
          This message is {total.source === "estimate" ? "about " : ""}
          {total.tokens.toLocaleString("en")} tokens, more than the {total.room.toLocaleString("en")} a
          message can take in this model&apos;s context window ({total.contextSize.toLocaleString("en")}{" "}
          tokens, less the answer&apos;s room): the model would not see all of it. Remove a file or shorten
          it.
        </p>
      )}
      {refused.length > 0 && (
        <div className="attachments__refused" role="alert">
          <ul>
            {refused.map((r, i) => (
              <li key={`${r.name}-${i}`}>
                {r.name} was not attached: {r.reason}.
              </li>
            ))}
          </ul>
          <button type="button" className="button button--small button--ghost" onClick={onDismissRefused}>
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}
