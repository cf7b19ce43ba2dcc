/**
 * An assistant message in UI mode: its stored document, or while it streams, the components
 * complete so far. Interactions go through the genui controller (genui.interact); the messages
 * it starts join the transcript like chat.send's. What was submitted comes from the transcript's user turns
 * (Message.interaction), so it survives reloads. A finished answer with a part that could not be
 * shown offers "Answer as text".
 */
import { useCallback, useMemo, useState } from "react";
import type { Message } from "../../../electron/api";
import type { InteractionValues, MessageInteraction } from "../../../electron/api/genui";
import { useAppState, useController, useGenuiController } from "../app/controller-context";
import { AnswerAsText } from "../chat/AnswerAsText";
import { InvalidPartReport } from "./components/InvalidView";
import { GenuiProvider, type GenuiActions } from "./genui-context";
import { GenuiDocument } from "./GenuiDocument";
import { StreamingDocument } from "./streaming-document";

const NO_MESSAGES: readonly Message[] = [];

function submissions(messages: readonly Message[], answerId: string): Map<string, MessageInteraction> {
  const map = new Map<string, MessageInteraction>();
  for (const m of messages) {
    if (m.role === "user" && m.interaction?.messageId === answerId)
      map.set(m.interaction.componentId, m.interaction);
  }
  return map;
}

export function GenuiAnswer({ message }: { message: Message }) {
  const genui = useGenuiController();
  const platform = useController().api.platform;
  const transcript = useAppState((s) => s.messages[message.conversationId] ?? NO_MESSAGES);
  const submitted = useMemo(() => submissions(transcript, message.id), [transcript, message.id]);
  // One incremental parser per message while it streams (or for an answer cut off without a document).
  // eslint-disable-next-line react-hooks/exhaustive-deps -- a new parser for each message
  const stream = useMemo(() => new StreamingDocument(), [message.id]);
  const streaming = message.status === "streaming";
  let document = message.ui ?? null;
  if (!document && (streaming || message.content.trimStart().startsWith("{")))
    document = stream.update(message.content);

  const { conversationId, id } = message;
  const interact = useCallback(
    (componentId: string, action: string, values: InteractionValues) =>
      genui.interact({ conversationId, id }, componentId, action, values),
    [genui, conversationId, id],
  );
  const actions = useMemo<GenuiActions>(
    () => ({ interact, submitted, enabled: !streaming, platform }),
    [interact, submitted, streaming, platform],
  );

  // How many inert stand-ins are on screen (a streamed, cut-off part may be replaced later).
  const [invalidParts, setInvalidParts] = useState(0);
  const report = useCallback(() => {
    setInvalidParts((n) => n + 1);
    return () => setInvalidParts((n) => n - 1);
  }, []);

  if (!document) return null;
  return (
    <>
      <InvalidPartReport.Provider value={report}>
        <GenuiProvider value={actions}>
          <GenuiDocument document={document} />
        </GenuiProvider>
      </InvalidPartReport.Provider>
      {invalidParts > 0 && !streaming && <AnswerAsText message={message} />}
    </>
  );
}
