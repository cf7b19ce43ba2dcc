import { type Pass, PLACEHOLDER, looksRandom, replaceCandidates } from "./rule";
import { redactRandomTokens } from "./tokens";

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
  // Twilio API key SID, Mailgun key, SendGrid key, Discord bot token (id.timestamp.hmac).
  [String.raw`SK(?=[0-9]{0,31}[a-f])[0-9a-f]{32}(?![A-Za-z0-9])`, false],
  [String.raw`key-[0-9a-f]{32}(?![A-Za-z0-9])`, false],
  [String.raw`SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`, false],
  [String.raw`[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}`, true],
];
const PREFIXED_RE = new RegExp(
  `(?<![A-Za-z0-9_\\-])(?:${PREFIXED.map(([p], i) => `(?<p${i}>${p})`).join("|")})`,
  "g",
);

// Credentials in a URL: scheme://user:password@host (the user may be empty: redis://:pw@host).
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{1,20}:\/\/)[^\s/:@[\]]{0,128}:[^\s/@[\]]{1,256}@/gi;

// Webhook URLs whose last path segment is the secret; the rest of the URL stays.
const WEBHOOK =
  /\b((?:hooks\.slack\.com\/(?:services|workflows|triggers)\/(?:[A-Za-z0-9_-]{1,40}\/){1,3})|(?:discord(?:app)?\.com\/api\/webhooks\/\d{5,25}\/))([A-Za-z0-9_-]{16,100})/g;

// "Authorization: Bearer …" and friends; the scheme word stays.
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s{1,4})([A-Za-z0-9._~+/-]{8,4096}=*)/gi;

// English, then German, French, Spanish, Portuguese, Dutch, Polish, Russian, Japanese, Chinese.
const PASSWORD_LIST = [
  "password",
  "passwd",
  "passphrase",
  "pgpassword",
  "pwd",
  "pw",
  "pass",
  "passwort",
  "kennwort",
  "mot de passe",
  "contraseña",
  "senha",
  "wachtwoord",
  "hasło",
  "пароль",
  "パスワード",
  "密码",
  "密碼",
];
// "api key", "API_KEY", "apiKey", "AccountKey" (the keyword may not start inside a word).
const KEY_LIST = [
  "api[_\\- ]?key",
  "apikey",
  "api[_\\- ]?secret",
  "secret[_\\- ]?access[_\\- ]?key",
  "access[_\\- ]?key(?:[_\\- ]?id)?",
  "(?:access|refresh|auth|id|session|bearer|csrf)[_\\- ]?token",
  "client[_\\- ]?secret",
  "private[_\\- ]?key",
  "secret[_\\- ]?key",
  "(?:account|shared[_\\-]?access|encryption|master|consumer|app|subscription|license)[_\\- ]?key",
  "(?:signing|webhook|app|consumer|shared)[_\\- ]?secret",
  // Azure DevOps / GitHub "personal access token", "PAT" (only before a machine-made value).
  "personal[_\\- ]?access[_\\- ]?token",
  "pat",
  "secret",
  "token",
];
const PASSWORD_WORDS = PASSWORD_LIST.join("|");
// A bare "key" counts only in an assignment ("key: Ab3…"), with a long machine-made value.
const KEY_WORDS = [...KEY_LIST, "key"].join("|");
// keyword, then `: ` / `=` / `=>` / `:=`, then a quoted value (may hold spaces) or a bare one.
const ASSIGNMENT = new RegExp(
  `(?<![A-Za-z0-9])(${PASSWORD_WORDS}|${KEY_WORDS})(["'\\]]?\\s{0,3}(?::=|=>|[:=])\\s{0,3})` +
    `(?:"([^"\\n]{1,256})"|'([^'\\n]{1,256})'|\`([^\`\\n]{1,256})\`|([^\\s"'\`,;<>\\[\\]{}()]{1,4096}))`,
  "gi",
);
const PASSWORD_RE = new RegExp(`^(?:${PASSWORD_WORDS})$`, "i");

// The same words in prose: "the wifi password is S3cr3t_Pa55", "Passwort ist …", "secret Ab3…".
// Not "pwd" (a shell command), "pw", "pass" (a verb) or "key" (a keyboard key, a primary key); only
// values that look machine-made or mix digits and symbols count (see proseValueIsSecret).
const PROSE_WORDS = [
  ...PASSWORD_LIST.filter((w) => w !== "pwd" && w !== "pw" && w !== "pass"),
  ...KEY_LIST,
].join("|");
const PROSE = new RegExp(
  `(?<![A-Za-z0-9])(${PROSE_WORDS})` +
    `((?:[ \\t]{1,3}(?:(?:is|was|ist|lautet|war|est|était|es|era|é|è|är|er|jest|это)[ \\t]{1,3})?)|[ \\t]{0,2}[は是为：][ \\t]{0,2})` +
    `([^\\s"'\`,;<>\\[\\]{}()]{6,256})`,
  "gi",
);

// Command-line passwords: mysql -p'…' / -pSECRET, --password SECRET, curl -u user:password.
const CLI_P = /(?<![^\s])-p(?:'([^'\n]{3,256})'|"([^"\n]{3,256})"|([^\s'"-][^\s'"]{7,255}))/g;
const CLI_PASSWORD =
  /(?<![^\s])(--(?:password|passwd|pass))([ \t]{1,3})(?:'([^'\n]{1,256})'|"([^"\n]{1,256})"|([^\s'"-][^\s'"]{0,255}))/g;
const CLI_USER = /(?<![^\s])(-u|--user)([ \t]{1,3}|=)(['"]?)([^\s:'"]{1,128}):([^\s'"]{1,256})/g;
// smbclient / rpcclient: -U user%password.
const CLI_USER_PERCENT = /(?<![^\s])(-U|--user)([ \t]{1,3}|=)(['"]?)([^\s%'"]{1,128})%([^\s'"]{1,256})/g;
// "-p PASSWORD" with a space: a password only after sshpass or a registry login (elsewhere -p is
// a port, a path, a flag of its own: ssh -p 2222, mkdir -p dir, docker run -p 80:80).
const CLI_P_SPACED =
  /(?<![^\s])-p([ \t]{1,3})(?:'([^'\n]{1,256})'|"([^"\n]{1,256})"|([^\s'"-][^\s'"]{0,255}))/g;
// What precedes it: "sshpass" and its flags, or "docker login" and its arguments (same command).
const P_TAKES_PASSWORD =
  /(?:^|[\s;&|(])(?:sshpass(?:[ \t]{1,3}-[A-Za-z]{1,3})?|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]{1,3}registry)[ \t]{1,3}login(?:[ \t]{1,3}[^\s;&|]{1,200}){0,6})[ \t]{1,3}$/;
// Windows "net use Z: \\srv\share P4ss /user:dom\me" and "net user NAME P4ss /add": the arguments
// that are neither a drive, a share, a switch nor "*" are the password (and, for net user, the name).
const NET_USE = /(?<![A-Za-z0-9])(net[ \t]{1,4}(use|user))((?:[ \t]{1,4}[^\s]{1,260}){1,8})/gi;
// "login admin / Adm1n@2024", "credentials: root:T0p$ecret", "user/pass bob / S3cr3t!".
const LOGIN_PAIR =
  /(?<![A-Za-z0-9])((?:login|log[ \t]in[ \t]with|credentials|creds|user(?:name)?[ \t]?\/[ \t]?pass(?:word)?)[:=]?[ \t]{1,3}[^\s/:@]{1,64}(?:[ \t]{1,2}\/[ \t]{1,2}|:))([^\s]{3,128})/gi;

// Values after "password:" that are code or documentation, not a password.
const NOT_A_PASSWORD =
  /^(?:string|str|number|int|bool|boolean|null|none|nil|true|false|undefined|required|optional|empty|\*+|x+|\.+|[$%][\w{]\S*|process\.env\S*|os\.environ\S*|env\.\S*|getenv\S*|self\.\S*|this\.\S*|req\.\S*|config\.\S*|settings\.\S*|args\.\S*|options\.\S*|input\S*)$/i;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Machine-made, or a password-ish mix of digits and symbols ("Sonnenblume!77"). */
function passwordLike(value: string): boolean {
  if (value.length < 6 || /^\d+$/.test(value) || NOT_A_PASSWORD.test(value)) return false;
  return looksRandom(value) || (/\d/.test(value) && /[^\p{L}\p{N}]/u.test(value));
}

function assignmentValueIsSecret(keyword: string, value: string): boolean {
  // "pass" is also a test verdict ("pass: 3/5"), "pw" a variable name: only password-like values.
  if (keyword.toLowerCase() === "pass" || keyword.toLowerCase() === "pw") return passwordLike(value);
  if (PASSWORD_RE.test(keyword)) return value.length >= 3 && !NOT_A_PASSWORD.test(value);
  // A bare "key" is also a React key, a map key, a primary key: only long machine-made values.
  if (keyword.toLowerCase() === "key") return value.length >= 20 && looksRandom(value) && !UUID.test(value);
  if (value.length < 12) return false;
  return looksRandom(value) || /^[0-9a-f]{16,}$/i.test(value);
}

function proseValueIsSecret(keyword: string, value: string): boolean {
  if (PASSWORD_RE.test(keyword)) return passwordLike(value);
  return value.length >= 16 && looksRandom(value) && !UUID.test(value);
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
  text = replaceCandidates(text, WEBHOOK, (_match, _offset, [prefix]) => {
    found("secret");
    return `${prefix}${SECRET}`;
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
  text = replaceCandidates(text, PROSE, (_match, _offset, [keyword, sep, raw]) => {
    const value = raw!.replace(/[.,]$/, "");
    if (!proseValueIsSecret(keyword!, value)) return null;
    found("secret");
    return `${keyword}${sep}${SECRET}${raw!.slice(value.length)}`;
  });
  text = replaceCandidates(text, CLI_P, (_match, _offset, [sq, dq, bare]) => {
    if (bare !== undefined ? !looksRandom(bare) : NOT_A_PASSWORD.test((sq ?? dq)!)) return null;
    found("secret");
    const quote = sq !== undefined ? "'" : dq !== undefined ? '"' : "";
    return `-p${quote}${SECRET}${quote}`;
  });
  text = replaceCandidates(text, CLI_PASSWORD, (_match, _offset, [flag, space, sq, dq, bare]) => {
    const value = (sq ?? dq ?? bare)!;
    if (value.startsWith(SECRET) || value.length < 3 || NOT_A_PASSWORD.test(value)) return null;
    found("secret");
    const quote = sq !== undefined ? "'" : dq !== undefined ? '"' : "";
    return `${flag}${space}${quote}${SECRET}${quote}`;
  });
  text = replaceCandidates(text, CLI_USER, (_match, _offset, [flag, sep, quote, user, password]) => {
    if (password!.startsWith(SECRET) || !passwordLike(password!)) return null;
    found("secret");
    return `${flag}${sep}${quote}${user}:${SECRET}`;
  });
  text = replaceCandidates(text, CLI_USER_PERCENT, (_match, _offset, [flag, sep, quote, user, password]) => {
    if (password!.startsWith(SECRET) || !passwordLike(password!)) return null;
    found("secret");
    return `${flag}${sep}${quote}${user}%${SECRET}`;
  });
  text = replaceCandidates(text, CLI_P_SPACED, (_match, offset, [space, sq, dq, bare]) => {
    const value = (sq ?? dq ?? bare)!;
    if (value.startsWith(SECRET) || NOT_A_PASSWORD.test(value)) return null;
    if (!P_TAKES_PASSWORD.test(text.slice(Math.max(0, offset - 300), offset))) return null;
    found("secret");
    const quote = sq !== undefined ? "'" : dq !== undefined ? '"' : "";
    return `-p${space}${quote}${SECRET}${quote}`;
  });
  text = replaceCandidates(text, NET_USE, (_match, _offset, [command, verb, args]) => {
    let changed = false;
    const kept = args!.replace(/[^\s]+/g, (arg) => {
      const isUser = verb!.toLowerCase() === "user";
      if (/^(?:[A-Za-z]:|\\\\.*|\/.*|\*|[A-Z]{1,3}\d?:)$/.test(arg) || !passwordLike(arg)) return arg;
      // "net user NAME PASSWORD": a name is letters, digits, "_", "." and "-" without a symbol.
      if (isUser && /^[\w.-]+$/.test(arg) && !looksRandom(arg)) return arg;
      changed = true;
      found("secret");
      return SECRET;
    });
    return changed ? `${command}${kept}` : null;
  });
  text = replaceCandidates(text, LOGIN_PAIR, (_match, _offset, [head, raw]) => {
    const value = raw!.replace(/[.,;)]$/, "");
    if (value.startsWith(SECRET) || !passwordLike(value) || /^v?\d+(?:\.\d+)+/.test(value)) return null;
    found("secret");
    return `${head}${SECRET}${raw!.slice(value.length)}`;
  });
  return redactRandomTokens(text, found);
};
