import { describe, expect, it } from "vitest";
import {
  admit,
  ATTACHMENT_MAX_BYTES,
  ATTACHMENT_MAX_FILES,
  attachmentBlock,
  composeMessage,
  decodeText,
  fenceName,
  readAttachment,
  splitAttachments,
  type Attachment,
} from "./attachments";

const file = (name: string, content: string | Uint8Array, type = "text/plain") => {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  return {
    name,
    type,
    size: bytes.length,
    arrayBuffer: () => Promise.resolve(bytes.slice().buffer),
  };
};

const attachment = (name: string, text: string): Attachment => ({ id: name, name, size: text.length, text });

describe("attachments", () => {
  it("reads a text file and sends it as a fenced block named after the file, after the typed text", async () => {
    const read = await readAttachment(file("main.ts", "const a = 1;\n", ""));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.attachment).toMatchObject({ name: "main.ts", size: 13, text: "const a = 1;\n" });
    expect(composeMessage("  What does this do?  ", [read.attachment])).toBe(
      "What does this do?\n\n```main.ts\nconst a = 1;\n```",
    );
    expect(composeMessage("", [attachment("a.txt", "x")])).toBe("```a.txt\nx\n```");
  });

  it("fences a file that contains fences with a longer fence, and keeps the name on one line", () => {
    const block = attachmentBlock({ name: "evil`\nname.md", text: "```js\nx\n```\n" });
    expect(block.startsWith("````evil__name.md\n")).toBe(true);
    expect(block.endsWith("\n````")).toBe(true);
    expect(fenceName("  ")).toBe("file");
  });

  it("refuses binary files (NUL bytes, not UTF-8, a binary media type) and oversized files, with the reason", async () => {
    expect(await readAttachment(file("a.bin", new Uint8Array([65, 0, 66])))).toEqual({
      ok: false,
      name: "a.bin",
      reason: "it is not a text file",
    });
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]))).toMatchObject({ ok: false });
    expect(await readAttachment(file("p.png", "PNG", "image/png"))).toMatchObject({
      ok: false,
      reason: "it is not a text file",
    });
    const big = await readAttachment(file("big.log", "x".repeat(ATTACHMENT_MAX_BYTES + 1)));
    expect(big).toMatchObject({ ok: false, name: "big.log", reason: "it is larger than 100 kB" });
    expect(await readAttachment(file("ok.log", "x".repeat(ATTACHMENT_MAX_BYTES)))).toMatchObject({
      ok: true,
    });
  });

  it("admits files up to the count and the message's character limit", () => {
    const many = Array.from({ length: ATTACHMENT_MAX_FILES + 1 }, (_, i) => attachment(`f${i}.txt`, "x"));
    const counted = admit([], many, "");
    expect(counted.added).toHaveLength(ATTACHMENT_MAX_FILES);
    expect(counted.refused).toEqual([
      { name: `f${ATTACHMENT_MAX_FILES}.txt`, reason: expect.any(String) as string },
    ]);
    const long = admit(
      [attachment("a.txt", "x".repeat(60_000))],
      [attachment("b.txt", "y".repeat(60_000))],
      "hi",
    );
    expect(long.added).toEqual([]);
    expect(long.refused[0]!.reason).toContain("longer than 100,000 characters");
  });
});

describe("splitAttachments (the user's bubble)", () => {
  it("gives back the typed text and each attached file, in order", () => {
    const sent = composeMessage("Compare these", [
      { name: "a.ts", text: "const a = 1;\n" },
      { name: "notes.md", text: "```js\nx\n```\n" },
    ]);
    expect(splitAttachments(sent)).toEqual({
      text: "Compare these",
      files: [
        { name: "a.ts", text: "const a = 1;\n" },
        { name: "notes.md", text: "```js\nx\n```\n" },
      ],
    });
    expect(splitAttachments(composeMessage("", [{ name: "only.txt", text: "hi" }]))).toEqual({
      text: "",
      files: [{ name: "only.txt", text: "hi\n" }],
    });
  });

  it("leaves code the user typed in the text", () => {
    const typed = "Why does this fail?\n\n```python\nprint(1)\n```";
    expect(splitAttachments(typed)).toEqual({ text: typed, files: [] });
    expect(splitAttachments("plain question")).toEqual({ text: "plain question", files: [] });
  });
});
