import { useState } from "react";
import { Button, Input, Label, Text, TextField } from "react-aria-components";
import { usePrivacyController, usePrivacyState } from "../app/controller-context";
import { configuredEndpoint } from "./privacy-logic";

/**
 * The feedback service URL: where shared feedback is uploaded. Core's sync status tells the
 * user to set one "in Privacy settings" when none is set; this is that field.
 */
export function EndpointField({ endpoint }: { endpoint: string }) {
  const privacyController = usePrivacyController();
  const saving = usePrivacyState((s) => s.savingEndpoint);
  const saved = usePrivacyState((s) => s.endpointSaved);
  const [value, setValue] = useState(() => configuredEndpoint(endpoint));

  return (
    <form
      className="privacy__endpoint"
      onSubmit={(e) => {
        e.preventDefault();
        void privacyController.setEndpoint(value);
      }}
    >
      <TextField
        className="privacy__endpoint-field"
        value={value}
        onChange={(v) => {
          setValue(v);
          privacyController.editEndpoint();
        }}
        type="url"
      >
        <Label>Feedback service URL</Label>
        <div className="privacy__endpoint-row">
          <Input className="input" placeholder="https://feedback.example.com" autoComplete="off" />
          <Button type="submit" className="button" isDisabled={saving}>
            {saving ? "Saving…" : "Save"}
          </Button>
        </div>
        <Text slot="description" className="muted">
          Shared feedback goes only here; empty means none is set and nothing is uploaded.{" "}
          MACARON_FEEDBACK_ENDPOINT, when the app is started with it, wins over this field.
        </Text>
      </TextField>
      {saved && (
        <p role="status" className="privacy__endpoint-saved">
          Saved. Now using <code>{endpoint}</code>.
        </p>
      )}
    </form>
  );
}
