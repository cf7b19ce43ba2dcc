/**
 * Random-looking standalone tokens: API keys and access tokens of formats no other rule knows
 * (`dop_v1_<hex>`, `lin_api_…`, a bare 40-char key pasted into prose). The approach of secret
 * scanners (gitleaks, detect-secrets): a token of a base62/base64-like alphabet whose Shannon
 * entropy is close to what a random string of that length and alphabet would have.
 *
 * What users paste and must keep is never flagged without a keyword (see secrets.ts):
 * - lowercase hex alone, of any length: git commits, sha256 checksums, trace ids, Docker
 *   digests, UUIDs (a bare 64-hex value is as likely a checksum as a key);
 * - lowercase letters and digits alone (Chrome extension ids, base32 hashes, Nix store paths);
 * - upper case and digits alone (GUIDs, ULIDs, SKUs, licence-plate-like ids);
 * - identifiers (`getUserAccountSettingsHandler2`, `MAX_RETRIES_V2`): their letters come in
 *   lowercase runs (words), and their entropy stays well below a random string's;
 * - short values: under 32 characters standalone (base64 of short strings, content hashes in
 *   file names, CSS colours, YouTube ids), under 30 after a prefix (`chatcmpl-…`, `msg_01…`,
 *   `pi_3M…` ids of LLM and payment APIs are 24-29);
 * - Subresource Integrity / npm `integrity` values (`sha512-…`, `sha384-…`): public content
 *   hashes of published files, routinely pasted from lockfiles;
 * - SSH public key blobs (`AAAAC3NzaC1…`): public keys, pasted when debugging SSH access.
 */
import { PLACEHOLDER, type Pass, replaceCandidates } from "./rule";

const SECRET = PLACEHOLDER.secret;

/**
 * A maximal run of base64/base64url characters, optionally padded. The lookbehind lets a run
 * start only at its first character, and the single character class makes each attempt one
 * greedy scan: linear in the text. Runs longer than the bound (images, blobs) are left alone.
 */
const TOKEN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,4096}={0,2}(?![A-Za-z0-9+/_=-])/g;

// `<prefix>_` or `<prefix>-`, up to three short segments, each all lower or all upper case.
const PREFIX_SEGMENT = /^(?:[a-z][a-z0-9]{0,9}|[A-Z][A-Z0-9]{0,9})$/;
// Prefixes of hashes and ids that precede a hex value (`sha256_…`, `commit_…`, `trace_…`).
const HASH_WORD =
  /^(?:sha\d{0,3}|md5|hash|digest|checksum|commit|rev|revision|oid|blob|tree|object|etag|id|uuid|guid|trace|span|request|req|build|cache|chunk|file|content)$/i;
const INTEGRITY = /^sha(?:1|224|256|384|512)-/;
const SSH_PUBLIC_KEY = /^AAAA[A-Z0-9]3NzaC1/;

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * The entropy a random string of `length` characters over `alphabet` symbols has on average
 * (log2 of the alphabet, less the Miller-Madow small-sample bias), minus a margin that lets
 * about 99% of random strings through. Identifiers and words fall well below it.
 */
function entropyThreshold(length: number, alphabet: number): number {
  return Math.log2(alphabet) - (alphabet - 1) / (2 * length * Math.LN2) - 0.45;
}

/** Share of the letters that sit in lowercase runs of 4 or more: words, not random text. */
function wordShare(s: string): number {
  let inWords = 0;
  let letters = 0;
  for (const m of s.matchAll(/[a-z]{4,}/g)) inWords += m[0].length;
  for (const c of s) if ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z")) letters++;
  return letters ? inWords / letters : 0;
}

/** Mixed-case base62/base64 body: both cases and a digit, random-level entropy, few words. */
function randomMixed(body: string, minLength: number): boolean {
  const core = body.replace(/=+$/, "");
  if (core.length < minLength) return false;
  if (!/[a-z]/.test(core) || !/[A-Z]/.test(core) || !/[0-9]/.test(core)) return false;
  if (wordShare(core) > 0.35) return false;
  return shannonEntropy(core) >= entropyThreshold(core.length, 62);
}

/** Lowercase hex or base36 body after an underscore prefix (`dop_v1_<hex>`, `shpss_<hex>`). */
function randomLowerAlnum(body: string): boolean {
  if (body.length < 32 || !/^[a-z0-9]+$/.test(body) || !/[a-z]/.test(body) || !/[0-9]/.test(body))
    return false;
  if (wordShare(body) > 0.35) return false;
  return shannonEntropy(body) >= entropyThreshold(body.length, /^[0-9a-f]+$/.test(body) ? 16 : 36);
}

/**
 * A prefixed token (`lin_api_<body>`, `whsec_<body>`, `dop_v1_<hex>`): tries each split after a
 * short prefix of up to three segments. Undefined when the token has no such prefix.
 */
function prefixedSecret(token: string): boolean | undefined {
  let prefixed: boolean | undefined;
  let start = 0;
  let first = "";
  for (let segments = 0; segments < 3; segments++) {
    const sep = token.slice(start).search(/[_-]/);
    if (sep < 0) break;
    const segment = token.slice(start, start + sep);
    if (!PREFIX_SEGMENT.test(segment)) break;
    if (segments === 0) first = segment;
    const body = token.slice(start + sep + 1);
    prefixed = false;
    if (randomMixed(body, 30)) return true;
    // Hex or base36 only after "_" (`chunk-<hash>` names use "-") and not after a hash word.
    if (token[start + sep] === "_" && !HASH_WORD.test(first) && randomLowerAlnum(body)) return true;
    start += sep + 1;
  }
  return prefixed;
}

/** True for a token without "/" that looks like a machine-made secret (see the file comment). */
function isRandomSegment(token: string): boolean {
  if (INTEGRITY.test(token) || SSH_PUBLIC_KEY.test(token)) return false;
  return prefixedSecret(token) ?? randomMixed(token, 32);
}

/**
 * A run with "/" is a path or URL ("en-US/docs/Web/API", "bot123:AAx…/getUpdates") when a
 * segment is empty or mostly words; then each segment is judged alone. Otherwise it is base64.
 */
function pathSegments(token: string): string[] | null {
  if (!token.includes("/")) return null;
  const segments = token.split("/");
  const wordLike = (s: string): boolean =>
    s === "" || (s.length >= 3 && (/^[A-Za-z][a-z]+(?:[A-Z][a-z]+)*$/.test(s) || wordShare(s) > 0.5));
  return segments.some(wordLike) ? segments : null;
}

/** True for a token that looks like a machine-made secret (see the file comment). */
export function isRandomToken(token: string): boolean {
  if (INTEGRITY.test(token) || SSH_PUBLIC_KEY.test(token)) return false;
  const segments = pathSegments(token);
  if (segments) return segments.some(isRandomSegment);
  if (token.includes("/")) return randomMixed(token, 32);
  return isRandomSegment(token);
}

/** Redacts random-looking tokens; in a path or URL only the random segment goes. */
export const redactRandomTokens: Pass = (input, found) =>
  replaceCandidates(input, TOKEN, (match) => {
    if (!isRandomToken(match)) return null;
    const segments = pathSegments(match);
    if (segments) {
      return segments
        .map((s) => {
          if (!isRandomSegment(s)) return s;
          found("secret");
          return SECRET;
        })
        .join("/");
    }
    found("secret");
    return SECRET;
  });
