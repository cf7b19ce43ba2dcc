import { memo } from "react";
import type { UiDocument } from "../../../electron/api/genui";
import { NodeView } from "./NodeView";
import { SafeMarkdown } from "./SafeMarkdown";
import "./genui.css";

/** A UI answer: its text and UI blocks in reading order. */
export const GenuiDocument = memo(function GenuiDocument({ document }: { document: UiDocument }) {
  return (
    <div className="genui" role="group" aria-label="Generated interface">
      {document.blocks.map((block, i) =>
        block.kind === "text" ? (
          <SafeMarkdown key={`text-${i}`} text={block.markdown} />
        ) : (
          <NodeView key={`ui-${i}-${block.root.id}`} node={block.root} />
        ),
      )}
    </div>
  );
});
