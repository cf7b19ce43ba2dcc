import { useRef, useState } from "react";
import { useController } from "../app/controller-context";
import { downloadText } from "../app/download";
import { JsonFileInput } from "../app/JsonFileInput";

// The import limit of conversations.import; a bigger file is refused before it is read.
const MAX_IMPORT_BYTES = 50_000_000;

/** Sidebar footer: "Export all" (a .json download) and "Import…" (a file made by export). */
export function TransferActions() {
  const controller = useController();
  const fileInput = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);

  const exportAll = async () => {
    setBusy(true);
    const file = await controller.transfer.exportJson();
    setBusy(false);
    if (file) downloadText(file.fileName, file.json);
  };

  const importFile = async (file: File) => {
    if (file.size > MAX_IMPORT_BYTES) {
      controller.store.setState({ notice: "Import failed: the file is larger than 50 MB." });
      return;
    }
    setBusy(true);
    try {
      await controller.transfer.importJson(await file.text());
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="transfer-actions">
      <button
        type="button"
        className="button button--small button--ghost"
        disabled={busy}
        onClick={() => void exportAll()}
      >
        Export all
      </button>
      <button
        type="button"
        className="button button--small button--ghost"
        disabled={busy}
        onClick={() => fileInput.current?.click()}
      >
        Import…
      </button>
      <JsonFileInput
        inputRef={fileInput}
        label="Import conversations from a file"
        onFile={(file) => void importFile(file)}
      />
    </div>
  );
}
