import { type Pass, PLACEHOLDER, looksRandom, replaceCandidates } from "./rule";

const SECRET = PLACEHOLDER.secret;

// Private key blocks. The body class excludes "-", so it stops at the END line (or at the
// next dash) without backtracking; a block whose END is missing is still redacted.
const PEM =
  /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[^-]{0,100000}(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----)?/g;

/**
 * Tokens recognisable by their prefix. The lookbehind keeps a match from starting inside a
 * longer word ("task-…", "desk-…") and, with it, each start position is tried once.
 * Entry: [pattern, must the body look random (prose can share the prefix)].
 */
const PREFIXED: [string, boolean][] = [
  [String.raw`sk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?[A-Za-z0-9_\-]{20,300}`, true],
  [String.raw`[sr]k_(?:live|test)_[A-Za-z0-9]{16,200}`, false],
  [String.raw`gh[pousr]_[A-Za-z0-9]{30,255}`, false],
  [String.raw`github_pat_[A-Za-z0-9_]{30,255}`, false],
  [String.raw`glpat-[A-Za-z0-9_\-]{20,100}`, true],
  [String.raw`xox[abporse]-[A-Za-z0-9\-]{10,250}`, true],
  [String.raw`(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Za-z0-9])`, false],
  [String.raw`AIza[0-9A-Za-z_\-]{35}`, false],
  [String.raw`hf_[A-Za-z0-9]{30,100}`, true],
  [String.raw`npm_[A-Za-z0-9]{36}`, false],
  [String.raw`ya29\.[A-Za-z0-9_\-]{20,2000}`, false],
  // JWT: header.payload.signature, base64url (the signature is empty for alg "none").
  [String.raw`eyJ[A-Za-z0-9_\-]{8,8000}\.[A-Za-z0-9_\-]{8,16000}\.[A-Za-z0-9_\-]{0,8000}`, false],
];
const PREFIXED_RE = new RegExp(
  `(?<![A-Za-z0-9_\\-])(?:${PREFIXED.map(([p], i) => `(?<p${i}>${p})`).join("|")})`,
  "g",
);

// Credentials in a URL: scheme://user:password@host.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{1,20}:\/\/)[^\s/:@[\]]{1,128}:[^\s/@[\]]{1,256}@/gi;

// "Authorization: Bearer …" and friends; the scheme word stays.
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s{1,4})([A-Za-z0-9._~+/-]{8,4096}=*)/gi;

const PASSWORD_WORDS = "password|passwd|passphrase|pwd";
const KEY_WORDS = [
  "api[_\\-]?key",
  "apikey",
  "api[_\\-]?secret",
  "secret[_\\-]?access[_\\-]?key",
  "access[_\\-]?key(?:[_\\-]?id)?",
  "(?:access|refresh|auth|id|session|bearer|csrf)[_\\-]?token",
  "client[_\\-]?secret",
  "private[_\\-]?key",
  "secret[_\\-]?key",
  "secret",
  "token",
].join("|");
// keyword, then `: ` / `=` / `=>` / `:=`, then a quoted value (may hold spaces) or a bare one.
const ASSIGNMENT = new RegExp(
  `(?<![A-Za-z0-9])(${PASSWORD_WORDS}|${KEY_WORDS})(["'\\]]?\\s{0,3}(?::=|=>|[:=])\\s{0,3})` +
    `(?:"([^"\\n]{1,256})"|'([^'\\n]{1,256})'|\`([^\`\\n]{1,256})\`|([^\\s"'\`,;<>\\[\\]{}()]{1,4096}))`,
  "gi",
);
const PASSWORD_RE = new RegExp(`^(?:${PASSWORD_WORDS})$`, "i");

// Values after "password:" that are code or documentation, not a password.
const NOT_A_PASSWORD =
  /^(?:string|str|number|int|bool|boolean|null|none|nil|true|false|undefined|required|optional|empty|\*+|x+|\.+|[$%][\w{]\S*|process\.env\S*|os\.environ\S*|env\.\S*|getenv\S*|self\.\S*|this\.\S*|req\.\S*|config\.\S*|settings\.\S*|args\.\S*|options\.\S*|input\S*)$/i;

function assignmentValueIsSecret(keyword: string, value: string): boolean {
  if (PASSWORD_RE.test(keyword)) return value.length >= 3 && !NOT_A_PASSWORD.test(value);
  if (value.length < 12) return false;
  return looksRandom(value) || /^[0-9a-f]{16,}$/i.test(value);
}

/** API keys, tokens, private keys and credentials. */
export const redactSecrets: Pass = (input, found) => {
  let text = replaceCandidates(input, PEM, () => {
    found("secret");
    return SECRET;
  });
  text = replaceCandidates(text, PREFIXED_RE, (match, _offset, groups) => {
    const which = groups.findIndex((g) => g !== undefined);
    if (PREFIXED[which]?.[1] && !looksRandom(match.replace(/^[a-z]+[-_]/, ""))) return null;
    found("secret");
    return SECRET;
  });
  text = replaceCandidates(text, URL_CREDENTIALS, (_match, _offset, [scheme]) => {
    found("secret");
    return `${scheme}${SECRET}@`;
  });
  text = replaceCandidates(text, AUTH_SCHEME, (_match, _offset, [scheme, space, value]) => {
    if (!looksRandom(value!)) return null;
    found("secret");
    return `${scheme}${space}${SECRET}`;
  });
  text = replaceCandidates(text, ASSIGNMENT, (_match, _offset, [keyword, sep, dq, sq, bq, bare]) => {
    const value = (dq ?? sq ?? bq ?? bare)!;
    if (value.startsWith(SECRET) || !assignmentValueIsSecret(keyword!, value)) return null;
    found("secret");
    const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : bq !== undefined ? "`" : "";
    return `${keyword}${sep}${quote}${SECRET}${quote}`;
  });
  return text;
};
