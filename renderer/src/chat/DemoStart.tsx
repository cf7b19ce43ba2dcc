import suggestionsFile from "../../../resources/demo/suggestions.json";
import { useAppState, useChatController, useController } from "../app/controller-context";

interface Suggestion {
  specialist: string;
  prompt: string;
  passes: number;
  runs: number;
}

const SUGGESTIONS = (suggestionsFile as { suggestions: Suggestion[] }).suggestions;

const LABELS: Record<string, string> = { chat: "Chat", coding: "Coding", agent: "Agent", ui: "UI" };

/**
 * The empty chat with the demo model loaded: what the tiny demo can and cannot do, in plain
 * words, the prompts it answers right (measured through this chat: resources/demo/suggestions.json,
 * `npm run bench -- demo-suggestions`), and a real model as the next step.
 */
export function DemoStart() {
  const controller = useController();
  const chat = useChatController();
  const busy = useAppState((s) => s.modelBusy);
  return (
    <section className="demo-start" aria-label="About the demo model">
      <p>
        This is the <strong>tiny demo model</strong> (0.7M parameters, trained in minutes). It shows how
        Macaron routes each message to a specialist, but it only answers a few things it was trained on, and
        most other answers read as nonsense words. For real answers, get a real model.
      </p>
      {SUGGESTIONS.length > 0 && (
        <>
          <h2 className="demo-start__heading">Try one it answers right</h2>
          <ul className="demo-start__list">
            {SUGGESTIONS.map((s) => (
              <li key={s.prompt}>
                <button
                  type="button"
                  className="button demo-start__prompt"
                  title={`Right in ${s.passes} of ${s.runs} tries when measured`}
                  onClick={() => void chat.send(s.prompt)}
                >
                  <span className="badge">{LABELS[s.specialist] ?? s.specialist}</span> {s.prompt}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      <button
        type="button"
        className="button button--primary"
        aria-haspopup="dialog"
        disabled={busy}
        onClick={() => controller.openModels("find")}
      >
        Get a real model
      </button>
    </section>
  );
}
