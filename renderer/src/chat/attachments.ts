/**
 * Files attached to a message in the composer: text and code only, read in the renderer, and
 * sent as part of the user message (a fenced block named after the file), so history, export,
 * search and the model all see the same text. Binary files and files past the size limits are
 * refused with the reason.
 */

/** Largest file attached, in bytes (a long source file; the message limit below still applies). */
export const ATTACHMENT_MAX_BYTES = 100_000;
/** chat.send's limit on a message's text, in characters (electron/api/methods.ts). */
export const MESSAGE_MAX_CHARS = 100_000;
/** Most files on one message. */
export const ATTACHMENT_MAX_FILES = 10;

export interface Attachment {
  /** Stable within the composer (the same file may be attached twice). */
  id: string;
  name: string;
  /** Size of the file in bytes. */
  size: number;
  text: string;
}

export type AttachmentRead =
  { ok: true; attachment: Attachment } | { ok: false; name: string; reason: string };

/** Media types that are never text, whatever the bytes look like. */
const BINARY_TYPE = /^(image|audio|video|font)\/|^application\/(pdf|zip|gzip|x-tar|x-7z|octet-stream|vnd\.)/;

/** A file name safe on a fence's info line: no backticks or line breaks, not too long. */
export function fenceName(name: string): string {
  const clean = name.replace(/[`\r\n\t]/g, "_").trim();
  return (clean || "file").slice(0, 200);
}

/** A fence longer than any run of backticks in `text`, so the file cannot close it early. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}

/** One attachment as it is sent: a fenced block whose info string is the file's name. */
export function attachmentBlock(a: Pick<Attachment, "name" | "text">): string {
  const fence = fenceFor(a.text);
  const body = a.text.endsWith("\n") ? a.text : `${a.text}\n`;
  return `${fence}${fenceName(a.name)}\n${body}${fence}`;
}

/** The user message: what was typed, then each attached file as a fenced block. */
export function composeMessage(
  text: string,
  attachments: readonly Pick<Attachment, "name" | "text">[],
): string {
  return [text.trim(), ...attachments.map(attachmentBlock)].filter((part) => part.length > 0).join("\n\n");
}

/**
 * The text of a file's bytes, or why it is not a text file: a NUL byte in it, or bytes that
 * are not UTF-8 (a UTF-8 byte-order mark is dropped).
 */
export function decodeText(bytes: Uint8Array): { ok: true; text: string } | { ok: false; reason: string } {
  if (bytes.includes(0)) return { ok: false, reason: "it is not a text file" };
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return { ok: true, text };
  } catch {
    return { ok: false, reason: "it is not a text file (not UTF-8)" };
  }
}

let nextId = 0;

/** Read a picked or dropped file; refused when binary or too large (checked before reading it whole). */
export async function readAttachment(
  file: Pick<File, "name" | "size" | "type" | "arrayBuffer">,
): Promise<AttachmentRead> {
  const name = file.name;
  if (file.size > ATTACHMENT_MAX_BYTES) {
    return { ok: false, name, reason: `it is larger than ${Math.round(ATTACHMENT_MAX_BYTES / 1000)} kB` };
  }
  if (BINARY_TYPE.test(file.type)) return { ok: false, name, reason: "it is not a text file" };
  const decoded = decodeText(new Uint8Array(await file.arrayBuffer()));
  if (!decoded.ok) return { ok: false, name, reason: decoded.reason };
  nextId += 1;
  return { ok: true, attachment: { id: `attachment-${nextId}`, name, size: file.size, text: decoded.text } };
}

/**
 * Which of `incoming` join `current` and which are refused: past the file count, or past the
 * message's character limit together with the text typed so far.
 */
export function admit(
  current: readonly Attachment[],
  incoming: readonly Attachment[],
  typed: string,
): { added: Attachment[]; refused: { name: string; reason: string }[] } {
  const added: Attachment[] = [];
  const refused: { name: string; reason: string }[] = [];
  for (const a of incoming) {
    const next = [...current, ...added, a];
    if (next.length > ATTACHMENT_MAX_FILES) {
      refused.push({ name: a.name, reason: `a message takes at most ${ATTACHMENT_MAX_FILES} files` });
    } else if (composeMessage(typed, next).length > MESSAGE_MAX_CHARS) {
      refused.push({
        name: a.name,
        reason: `the message would be longer than ${MESSAGE_MAX_CHARS.toLocaleString("en")} characters`,
      });
    } else {
      added.push(a);
    }
  }
  return { added, refused };
}

/** A file name as attachmentBlock writes it on the fence: has a dot or a slash, no spaces at its ends. */
const FILE_NAME = /^[^\s`](?:[^`]*[^\s`])?$/;

/**
 * A sent user message split back into what was typed and the attached files (the fenced
 * blocks composeMessage put after the text, each named after its file), so the bubble can show
 * the files as chips. A trailing fence whose info string is no file name (```python) is code
 * the user typed and stays in the text.
 */
export function splitAttachments(content: string): { text: string; files: { name: string; text: string }[] } {
  const files: { name: string; text: string }[] = [];
  const lines = content.split("\n");
  let end = lines.length; // lines[0, end) are not yet taken
  for (;;) {
    const close = lines[end - 1];
    if (close === undefined || !/^`{3,}$/.test(close)) break;
    // The opening line: the same fence followed by a file name, at the start or after a blank line.
    let open = -1;
    for (let i = end - 2; i >= 0; i--) {
      const line = lines[i]!;
      if (line.startsWith(close) && !line.startsWith(`${close}\``)) {
        open = i;
        break;
      }
    }
    if (open === -1) break;
    const name = lines[open]!.slice(close.length);
    if (!FILE_NAME.test(name) || !/[./\\]/.test(name)) break;
    if (open > 0 && lines[open - 1] !== "") break;
    files.unshift({ name, text: `${lines.slice(open + 1, end - 1).join("\n")}\n` });
    end = Math.max(0, open - 1);
  }
  if (files.length === 0) return { text: content, files };
  return { text: lines.slice(0, end).join("\n").trim(), files };
}
