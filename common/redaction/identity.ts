import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

// The local part is bounded (RFC 5321: 64) and may not start inside a longer run of
// local-part characters, so each start is tried once and scans at most 64 characters.
// Letters are Unicode letters: "josé@exämple.de" is an address too (RFC 6531).
// The "@" may be URL-encoded ("?email=jane%40mail.com" in a logged request).
const EMAIL =
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64}?(?:@|%40)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(\p{L}{2,24})(?![\p{L}\p{N}-])/gu;

// "icon@2x.png", "pkg@1.0.0/dist/index.js": file names, not addresses. These extensions are
// not top-level domains (unlike .zip, .mov, .md, .py, .rs, .sh).
const FILE_EXTENSION =
  /^(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|tiff?|heic|pdf|js|mjs|cjs|jsx|ts|tsx|mts|cts|json|jsonc|css|scss|sass|less|html?|vue|svelte|txt|lock|ya?ml|toml|ini|xml|csv|tsv|log|gguf|wasm|map|woff2?|ttf|otf|mp3|wav|ogg|webm|mp4|mkv)$/i;
// "git@github.com:org/repo.git", "ssh -T git@gitlab.com": the SSH account of a code host.
const SERVICE_ACCOUNT = /^(?:git|hg)$/;

/** Email addresses. */
export const redactEmails: Pass = (text, found) =>
  replaceCandidates(text, EMAIL, (match, _offset, [tld]) => {
    if (FILE_EXTENSION.test(tld!)) return null;
    if (SERVICE_ACCOUNT.test(match.slice(0, match.search(/@|%40/)))) return null;
    found("email");
    return PLACEHOLDER.email;
  });

// Home folders: /home/alice, /Users/alice, /var/home/alice (Silverblue), /mnt/c/Users/alice (WSL).
// Not after a word character, dot or dash: "example.com/home/about" is a web page.
const UNIX_HOME =
  /(?<![\w.~-])((?:\/var|\/mnt\/[a-z])?\/(?:home|Users)\/)(?!\[USER\])([A-Za-z0-9._-]{1,64})(?![A-Za-z0-9._-])/g;
// C:\Users\alice, C:/Users/alice, C:\\Users\\alice (escaped in JSON or code). A Windows user
// name may contain spaces: take it up to the next separator when one follows closely.
const WINDOWS_HOME =
  /(?<![A-Za-z0-9])([A-Za-z]:(\\{1,2}|\/)(?:Users|Documents and Settings)\2)(?!\[USER\])(?:([^\\/:*?"<>|\r\n\t[\]]{1,64}?)(?=\\|\/)|([^\\/:*?"<>|\s[\]]{1,64}))/gi;

// Folder names that are not a person: shared folders, documentation placeholders, CI accounts.
const NOT_A_USER = new Set([
  "shared",
  "public",
  "guest",
  "default",
  "default user",
  "all users",
  "user",
  "username",
  "yourname",
  "your-name",
  "your_name",
  "yourusername",
  "me",
  "runner",
  "linuxbrew",
  "...",
  ".",
  "..",
]);

/** User names in home-directory paths; the path keeps its shape: `/home/[USER]/…`. */
export const redactHomePaths: Pass = (input, found) => {
  const text = replaceCandidates(input, UNIX_HOME, (_m, _o, [prefix, user]) => {
    if (NOT_A_USER.has(user!.toLowerCase())) return null;
    found("path");
    return `${prefix}${PLACEHOLDER.path}`;
  });
  return replaceCandidates(text, WINDOWS_HOME, (_m, _o, [prefix, , spaced, plain]) => {
    const user = (spaced ?? plain)!;
    if (NOT_A_USER.has(user.trim().toLowerCase())) return null;
    found("path");
    return `${prefix}${PLACEHOLDER.path}`;
  });
};
