import { usePrivacyController, usePrivacyState } from "../app/controller-context";
import { Modal } from "../app/Modal";
import { DeleteUploaded } from "./DeleteUploaded";
import { EndpointField } from "./EndpointField";
import { SharingChoice } from "./SharingChoice";
import { SyncStatusView } from "./SyncStatusView";
import { UploadPreview } from "./UploadPreview";

/**
 * What leaves this device, in plain words, and the controls over it: the sharing level
 * (off by default), the endpoint, the exact next upload, sync status and deleting what was sent.
 */
export function PrivacyDialog() {
  const privacyController = usePrivacyController();
  const privacy = usePrivacyState((s) => s.privacy);
  const loadError = usePrivacyState((s) => s.loadError);
  const actionError = usePrivacyState((s) => s.actionError);

  return (
    <Modal title="Privacy" onClose={() => privacyController.setOpen(false)} className="privacy-dialog">
      <Explanation />
      {privacy === null && !loadError && <p role="status">Loading…</p>}
      {loadError && (
        <div className="form-error" role="alert">
          {loadError}
        </div>
      )}
      {privacy && (
        <>
          <SharingChoice privacy={privacy} />
          <EndpointField endpoint={privacy.endpoint} />
          <p className="muted privacy__install">
            Random install id: <code>{privacy.installId}</code>
          </p>
          <UploadPreview />
          <SyncStatusView sync={privacy.sync} />
          <DeleteUploaded />
        </>
      )}
      {actionError && (
        <div className="form-error" role="alert">
          {actionError}
        </div>
      )}
    </Modal>
  );
}

function Explanation() {
  return (
    <section className="privacy__explain" aria-label="What is shared">
      <p>
        Macaron runs on this device. If you choose to share feedback, it helps train better versions of the
        assistant&apos;s specialist adapters. Nothing is shared unless you turn it on.
      </p>
      <ul>
        <li>
          <strong>What is sent:</strong> your ratings and their reasons, your corrections, when you ask for an
          answer again, how you use generated controls in answers, and when you override the adapter the
          router chose.
        </li>
        <li>
          <strong>Conversation text</strong> (the prompt, the answer and your correction) is sent only with
          &ldquo;Ratings and conversation text&rdquo;.
        </li>
        <li>
          <strong>Redacted here first:</strong> e-mail addresses, phone numbers, keys and similar details are
          replaced (for example by [EMAIL]) on this device before anything is queued.
        </li>
        <li>
          <strong>Not tied to you:</strong> uploads carry a random id made for this install, not your name or
          account. You can ask the service to delete everything sent under it.
        </li>
      </ul>
    </section>
  );
}
