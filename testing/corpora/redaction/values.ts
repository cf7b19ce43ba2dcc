/**
 * Deterministic generators of labelled values for the redaction corpus: every value is valid
 * for its kind (Luhn-valid cards, mod-97-valid IBANs, well-formed keys) unless named "invalid".
 */
import { mulberry32 } from "../../../common/prng";
import { IBAN_LENGTHS, luhnValid } from "../../../common/redaction/numbers";

/** The corpus's seeded values (common/prng.ts mulberry32), so the corpus is the same on every run. */
export class Random {
  private readonly draw: () => number;
  constructor(seed: number) {
    this.draw = mulberry32(seed);
  }
  next(): number {
    return this.draw();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chars(alphabet: string, n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
  digits(n: number): string {
    return this.chars("0123456789", n);
  }
}

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = LOWER.toUpperCase();
const DIGITS = "0123456789";
export const BASE62 = LOWER + UPPER + DIGITS;
const B64URL = BASE62 + "-_";

export const FIRST = [
  "alice",
  "bob",
  "carol",
  "dave",
  "erin",
  "frank",
  "grace",
  "heidi",
  "ivan",
  "judy",
  "mallory",
  "niaj",
  "olivia",
  "peggy",
  "rupert",
  "sybil",
  "trent",
  "victor",
  "walter",
  "yuki",
  "maria",
  "jose",
  "li",
  "fatima",
  "olu",
];
export const LAST = [
  "smith",
  "garcia",
  "mueller",
  "dubois",
  "tanaka",
  "kowalski",
  "rossi",
  "nguyen",
  "okafor",
  "silva",
  "jansen",
  "ivanova",
];
const DOMAINS = [
  "example.com",
  "mail.example.org",
  "uni-bonn.de",
  "company.co.uk",
  "gmail.com",
  "proton.me",
  "outlook.fr",
  "dev.startup.io",
  "posteo.net",
  "acme-corp.com",
];

export function email(r: Random): string {
  const f = r.pick(FIRST);
  const l = r.pick(LAST);
  const local = r.pick([
    `${f}`,
    `${f}.${l}`,
    `${f}_${l}${r.int(1, 99)}`,
    `${f[0]}${l}`,
    `${f}+${r.pick(["news", "work", "x"])}`,
    `${f.toUpperCase()}.${l}`,
  ]);
  return `${local}@${r.pick(DOMAINS)}`;
}

export function phone(r: Random): string {
  const d = (n: number): string => r.digits(n);
  const nxx = (): string => `${r.int(2, 9)}${d(2)}`;
  return r.pick([
    () => `+1 (${nxx()}) ${nxx()}-${d(4)}`,
    () => `(${nxx()}) ${nxx()}-${d(4)}`,
    () => `${nxx()}-${nxx()}-${d(4)}`,
    () => `${nxx()}.${nxx()}.${d(4)}`,
    () => `1-${nxx()}-${nxx()}-${d(4)}`,
    () => `+1${nxx()}${nxx()}${d(4)}`,
    () => `+44 20 ${r.int(3, 8)}${d(3)} ${d(4)}`,
    () => `020 ${r.int(3, 8)}${d(3)} ${d(4)}`,
    () => `07${d(3)} ${d(6)}`,
    () => `+44 (0)7${d(3)} ${d(6)}`,
    () => `+33 ${r.int(1, 7)} ${d(2)} ${d(2)} ${d(2)} ${d(2)}`,
    () => `0${r.int(1, 7)} ${d(2)} ${d(2)} ${d(2)} ${d(2)}`,
    () => `0${r.int(1, 7)}.${d(2)}.${d(2)}.${d(2)}.${d(2)}`,
    () => `+49 30 ${d(8)}`,
    () => `030 ${d(8)}`,
    () => `0170 ${d(7)}`,
    () => `0049 89 ${d(7)}`,
    () => `+91 ${r.int(6, 9)}${d(4)} ${d(5)}`,
    () => `+81 3-${d(4)}-${d(4)}`,
    () => `+55 11 9${d(4)}-${d(4)}`,
    () => `+61 2 ${d(4)} ${d(4)}`,
    () => `(02) ${d(4)} ${d(4)}`,
    () => `+34 6${d(2)} ${d(3)} ${d(3)}`,
  ])();
}

function withLuhn(partial: string): string {
  for (let c = 0; c < 10; c++) if (luhnValid(partial + c)) return partial + c;
  throw new Error("unreachable");
}

/** A Luhn-valid card number of a major network, written as people write them. */
export function card(r: Random, valid = true): string {
  const [prefix, length, shape] = r.pick<[string, number, number[]]>([
    ["4", 16, [4, 4, 4, 4]],
    ["4", 13, [4, 4, 5]],
    [`5${r.int(1, 5)}`, 16, [4, 4, 4, 4]],
    [`22${r.int(21, 99)}`, 16, [4, 4, 4, 4]],
    [r.pick(["34", "37"]), 15, [4, 6, 5]],
    ["6011", 16, [4, 4, 4, 4]],
    [`35${r.int(28, 89)}`, 16, [4, 4, 4, 4]],
    [`36`, 14, [4, 6, 4]],
    [`62`, 19, [4, 4, 4, 4, 3]],
  ]);
  let digits = withLuhn(prefix + r.digits(length - prefix.length - 1));
  if (!valid) digits = digits.slice(0, -1) + String((Number(digits.at(-1)) + r.int(1, 9)) % 10);
  const sep = r.pick(["", " ", "-"]);
  if (sep === "" || (shape.length === 3 && shape[0] === 4 && shape[1] === 4 && length === 13)) return digits;
  const parts: string[] = [];
  let i = 0;
  for (const n of shape) {
    parts.push(digits.slice(i, i + n));
    i += n;
  }
  return parts.join(sep);
}

const IBAN_COUNTRIES = [
  "DE",
  "FR",
  "GB",
  "NL",
  "ES",
  "IT",
  "BE",
  "CH",
  "AT",
  "PL",
  "SE",
  "NO",
  "IE",
  "PT",
  "DK",
  "FI",
  "LU",
];

function mod97(numeric: string): number {
  let rest = 0;
  for (const c of numeric) rest = (rest * 10 + Number(c)) % 97;
  return rest;
}

const toNumeric = (s: string): string =>
  [...s].map((c) => (c >= "A" ? String(c.charCodeAt(0) - 55) : c)).join("");

/** A mod-97-valid IBAN (or one with wrong check digits), grouped by four or compact. */
export function iban(r: Random, valid = true): string {
  const country = r.pick(IBAN_COUNTRIES);
  const bbanLength = IBAN_LENGTHS[country]! - 4;
  // GB, NL and IE start the BBAN with a bank code in letters.
  const letters = country === "GB" || country === "IE" ? 4 : country === "NL" ? 4 : 0;
  const bban = r.chars(UPPER, letters) + r.digits(bbanLength - letters);
  let check = 98 - mod97(toNumeric(bban + country + "00"));
  if (!valid) check = (check + r.int(1, 50)) % 97 || 2;
  const compact = `${country}${String(check).padStart(2, "0")}${bban}`;
  return r.next() < 0.6 ? compact.replace(/(.{4})/g, "$1 ").trim() : compact;
}

export function ipv4(r: Random): string {
  return r
    .pick([
      () => `192.168.${r.int(0, 255)}.${r.int(1, 254)}`,
      () => `10.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`,
      () => `${r.int(1, 223)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`,
      () => `172.${r.int(16, 31)}.${r.int(0, 255)}.${r.int(1, 254)}`,
    ])()
    .replace(/^127\./, "128.");
}

export function ipv6(r: Random): string {
  const h = (): string => r.int(0, 0xffff).toString(16);
  return r.pick([
    () => Array.from({ length: 8 }, h).join(":"),
    () => `2001:db8:${h()}::${h()}:${h()}`,
    () => `fe80::${h()}:${h()}:${h()}:${h()}`,
    () => `2a02:${h()}:${h()}:${h()}::${r.int(1, 9)}`,
    () => `::ffff:${r.int(1, 223)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`,
    () => `2001:0db8:${h().padStart(4, "0")}:0000:0000:${h()}:${h()}:${h()}`,
  ])();
}

const b64url = (s: string): string => Buffer.from(s).toString("base64url");

/** A secret and, where it goes into a sentence with its keyword, the text around it. */
export function secret(r: Random): { value: string; text: string } {
  const make = r.pick<() => [string, string]>([
    () => {
      const v = `sk-${r.chars(BASE62, 48)}`;
      return [v, `OPENAI_API_KEY=${v}`];
    },
    () => {
      const v = `sk-proj-${r.chars(B64URL, 120)}`;
      return [v, `my key is ${v}`];
    },
    () => {
      const v = `sk-ant-api03-${r.chars(B64URL, 93)}AA`;
      return [v, `ANTHROPIC_API_KEY="${v}"`];
    },
    () => {
      const v = `ghp_${r.chars(BASE62, 36)}`;
      return [v, `git clone https://${v}@github.com/acme/app.git`];
    },
    () => {
      const v = `github_pat_${r.chars(BASE62, 22)}_${r.chars(BASE62, 59)}`;
      return [v, `token ${v}`];
    },
    () => {
      const v = `xoxb-${r.digits(12)}-${r.digits(13)}-${r.chars(BASE62, 24)}`;
      return [v, `SLACK_BOT_TOKEN=${v}`];
    },
    () => {
      const v = `xoxp-${r.digits(11)}-${r.digits(12)}-${r.digits(13)}-${r.chars("0123456789abcdef", 32)}`;
      return [v, `slack user token ${v}`];
    },
    () => {
      const v = `AKIA${r.chars(UPPER + DIGITS, 16)}`;
      return [v, `aws_access_key_id = ${v}`];
    },
    () => {
      const v = `AIza${r.chars(B64URL, 35)}`;
      return [v, `const mapsKey = "${v}";`];
    },
    () => {
      const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
      const payload = b64url(
        JSON.stringify({ sub: r.digits(10), name: r.pick(FIRST), iat: 1516239022 + r.int(0, 1e6) }),
      );
      const v = `${header}.${payload}.${r.chars(B64URL, 43)}`;
      return [v, `curl -H "Authorization: Bearer ${v}" https://api.example.com/me`];
    },
    () => {
      const v = r.chars(BASE62 + "._-", 40);
      return [v, `Authorization: Bearer ${v}`];
    },
    () => {
      const v = r.chars("0123456789abcdef", 32);
      return [v, `api_key=${v}`];
    },
    () => {
      const v = r.chars(BASE62 + "+/", 40);
      return [v, `"token": "${v}"`];
    },
    () => {
      const v = r.chars(BASE62, 32);
      return [v, `client_secret: ${v}`];
    },
    () => {
      const v = r.chars(BASE62, 24);
      return [v, `SECRET_KEY = '${v}'`];
    },
    () => {
      const v = `${r.pick(["hunter", "Summer", "P@ss", "letmein", "Tr0ub4dor"])}${r.int(10, 9999)}${r.pick(["!", "", "#"])}`;
      return [v, `my password is password=${v} please keep it safe`];
    },
    () => {
      const v = `${r.pick(FIRST)}${r.int(1000, 9999)}`;
      return [v, `wifi password: ${v}`];
    },
    () => {
      const v = `sk_live_${r.chars(BASE62, 24)}`;
      return [v, `stripe.api_key = "${v}"`];
    },
    () => {
      const v = `hf_${r.chars(BASE62, 34)}`;
      return [v, `huggingface-cli login --token ${v}`];
    },
    () => {
      const v = r.chars(BASE62, 14) + r.digits(2);
      return [v, `postgres://admin:${v}@db.internal:5432/app`];
    },
    () => {
      const v = r.chars(BASE62 + "+/", 64);
      return [
        v,
        `-----BEGIN RSA PRIVATE KEY-----\n${v}\n${r.chars(BASE62 + "+/", 64)}\n-----END RSA PRIVATE KEY-----`,
      ];
    },
  ]);
  const [value, text] = make();
  return { value, text };
}

/** A home-directory path; the labelled value is the part up to and including the user name. */
export function homePath(r: Random): { value: string; text: string } {
  const user = r.pick([
    r.pick(FIRST),
    `${r.pick(FIRST)}.${r.pick(LAST)}`,
    `${r.pick(FIRST)[0]}${r.pick(LAST)}`,
    `${r.pick(FIRST)}_${r.int(1, 99)}`,
  ]);
  const tail = r.pick([
    "projects/app/src/index.ts",
    ".ssh/id_ed25519",
    "Documents/taxes-2023.pdf",
    "dev/macaron/node_modules/x/index.js",
    "Downloads/model.gguf",
    ".config/macaron/settings.json",
  ]);
  const which = r.int(0, 4);
  if (which === 0) return { value: `/home/${user}`, text: `/home/${user}/${tail}` };
  if (which === 1) return { value: `/Users/${user}`, text: `/Users/${user}/${tail}` };
  const win = tail.replace(/\//g, "\\");
  if (which === 2) return { value: `C:\\Users\\${user}`, text: `C:\\Users\\${user}\\${win}` };
  if (which === 3) return { value: `C:/Users/${user}`, text: `C:/Users/${user}/${tail}` };
  return {
    value: `C:\\\\Users\\\\${user}`,
    text: `"C:\\\\Users\\\\${user}\\\\${win.replace(/\\/g, "\\\\")}"`,
  };
}
