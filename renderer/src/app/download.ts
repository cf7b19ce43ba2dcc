/**
 * Save text as a file through the browser's download: a Blob URL made here (no remote URL) on
 * an <a download> created in code, revoked once the click has started the download.
 */
export function downloadText(fileName: string, text: string, type = "application/json"): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.rel = "noopener";
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference by now; a later revoke only frees the memory.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
