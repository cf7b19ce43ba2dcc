import { createHash } from "node:crypto";
import { openRegularFile } from "./files/regular-file";

/** sha256 of a file, streamed (the bench model is ~200 MB). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  // A regular file only (O_NONBLOCK + fstat): one swapped for a FIFO after validation cannot block.
  const { handle } = await openRegularFile(path);
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}
