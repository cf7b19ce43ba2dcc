import { usePrivacyController, usePrivacyState } from "../app/controller-context";
import { formatBytes } from "./privacy-logic";

/** "Preview next upload": the exact JSON of the next batch, as text in a read-only block. */
export function UploadPreview() {
  const privacy = usePrivacyController();
  const preview = usePrivacyState((s) => s.preview);
  const previewing = usePrivacyState((s) => s.previewing);

  return (
    <section className="privacy__preview" aria-label="Next upload">
      <button type="button" className="button" disabled={previewing} onClick={() => void privacy.preview()}>
        Preview next upload
      </button>
      {preview && (
        <>
          <p className="muted" role="status">
            {preview.items === 0
              ? "Nothing is waiting to be sent."
              : `${preview.items} ${preview.items === 1 ? "item" : "items"}, ${formatBytes(preview.bytes)}`}
          </p>
          {preview.items > 0 && (
            <pre className="privacy__json" aria-label="Next upload JSON" tabIndex={0}>
              <code>{preview.text}</code>
            </pre>
          )}
        </>
      )}
    </section>
  );
}
