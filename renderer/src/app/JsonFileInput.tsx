import type { RefObject } from "react";

/** A hidden `.json` file input, opened by a button that clicks `inputRef`; hands over the file chosen. */
export function JsonFileInput({
  inputRef,
  label,
  onFile,
}: {
  inputRef: RefObject<HTMLInputElement | null>;
  label: string;
  onFile: (file: File) => void;
}) {
  return (
    <input
      ref={inputRef}
      type="file"
      accept=".json,application/json"
      className="visually-hidden"
      tabIndex={-1}
      aria-label={label}
      onChange={(e) => {
        const file = e.target.files?.[0];
        // Reset so that choosing the same file again fires change again.
        e.target.value = "";
        if (file) onFile(file);
      }}
    />
  );
}
