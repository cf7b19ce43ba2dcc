import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

/** Luhn checksum of a digit string (payment cards). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** ISO 13616 check: move the first four characters to the end, letters to numbers, mod 97 = 1. */
export function ibanValid(compact: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const c of rearranged) {
    const code = c.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : c;
    for (const digit of value) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/** IBAN length per country (ISO 13616 registry); others are accepted at 15–34 characters. */
// prettier-ignore
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21,
  CR: 22, CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27,
  GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26,
  IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24,
  ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29,
  RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24,
  TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};

// Country code, check digits, then up to 32 characters with optional single separators
// (any case: the mod-97 check and the country's length keep false positives rare).
const IBAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){10,32}/g;

/**
 * The IBAN at the start of a candidate: the candidate can run on into the next word
 * ("… 0130 00 is mine"), so take exactly the country's length and check it ends there.
 */
function ibanPrefix(candidate: string): number | null {
  const ends: number[] = []; // ends[k] = index after the (k+1)-th alphanumeric character
  for (let i = 0; i < candidate.length; i++) if (/[A-Za-z0-9]/.test(candidate[i]!)) ends.push(i + 1);
  const compactAll = candidate.replace(/[^A-Za-z0-9]/g, "").toUpperCase();
  const known = IBAN_LENGTHS[compactAll.slice(0, 2)];
  const lengths = known ? [known] : Array.from({ length: 20 }, (_, i) => 34 - i);
  for (const n of lengths) {
    if (n > ends.length) continue;
    const end = ends[n - 1]!;
    // Must end at a group boundary, not in the middle of a word.
    if (end < candidate.length && /[A-Za-z0-9]/.test(candidate[end]!)) continue;
    if (ibanValid(compactAll.slice(0, n))) return end;
  }
  return null;
}

/** IBANs (mod-97 validated). */
export const redactIbans: Pass = (text, found) =>
  replaceCandidates(text, IBAN, (match) => {
    const end = ibanPrefix(match);
    if (end === null) return null;
    found("iban");
    return PLACEHOLDER.iban + match.slice(end);
  });

// 13–19 digits, optionally grouped by single spaces or dashes. One digit per iteration and a
// bounded count: no ambiguity to backtrack over.
const CARD = /(?<![\w.+-])\d(?:[ -]?\d){12,18}(?![\w]|[.-]\d)/g;

function cardGroupsPlausible(candidate: string): boolean {
  const seps = new Set(candidate.replace(/\d/g, ""));
  if (seps.size === 0) return true;
  if (seps.size > 1) return false;
  const lens = candidate.split(/[ -]/).map((g) => g.length);
  const shape = lens.join("-");
  if (shape === "4-6-5" || shape === "4-6-4") return true; // Amex, Diners
  return lens.slice(0, -1).every((l) => l === 4) && lens[lens.length - 1]! <= 4;
}

/**
 * A card number: 13–19 digits, a major network's first digit (2–6: Mastercard, Amex/Diners/JCB,
 * Visa, Mastercard/Maestro, Discover/UnionPay), Luhn-valid, and grouped like a card.
 */
export function isCardNumber(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  if (digits[0]! < "2" || digits[0]! > "6") return false;
  return luhnValid(digits) && cardGroupsPlausible(candidate);
}

/** Card numbers; a candidate that runs on ("4111 1111 1111 1111 2024") is cut at a group. */
export const redactCards: Pass = (text, found) =>
  replaceCandidates(text, CARD, (match) => {
    const cuts = [match.length];
    // A well-grouped 13–16 or 19-digit candidate that fails is a non-card; cutting it would
    // find a Luhn-valid prefix one time in ten. Only an odd run ("… 1111 5") is cut at a group.
    const digits = match.replace(/\D/g, "").length;
    const oddRun = !cardGroupsPlausible(match) || digits === 17 || digits === 18;
    if (oddRun)
      for (let i = match.length - 1; i > 0; i--) if (match[i] === " " || match[i] === "-") cuts.push(i);
    for (const cut of cuts) {
      if (isCardNumber(match.slice(0, cut))) {
        found("card");
        return PLACEHOLDER.card + match.slice(cut);
      }
    }
    return null;
  });

// Digit groups separated by at most one space, dot, dash or NBSP, optionally in parentheses,
// optionally after "+". Each group is a maximal digit run (`(?!\d)`), so a run is never split
// two ways and backtracking stays bounded.
const PHONE =
  /(?<![\w+./\\@:-])\+?\(?\d{1,14}(?!\d)\)?(?:[ \u00a0.-]?\(?\d{1,14}(?!\d)\)?){0,7}(?![\w@]|[./-]\d)/g;
// "call", "phone" and the like in English, German, French, Italian, Spanish, Portuguese, Dutch,
// Polish; then words that \b cannot bound (accents at the edge, Cyrillic, CJK).
const PHONE_CONTEXT =
  /(?:\b(?:tel|phone|telephone|call|mobile|cell|fax|whatsapp|sms|text me|ring|reach me|contact me|handy|(?:handy|telefon|ruf)nummer|telefon|telefono|telefone|celular|cellulare|movil|mobil|mobiel|portable|tél|komórka)\b[^\n\d]{0,12}|(?:☎|📞|téléphone|teléfono|móvil|número de teléfono|телефон|тел\.|电话|電話|手机|手機|携帯|전화)[^\n\d]{0,12})$/i;

/**
 * A phone number: international (+CC or 00CC, 8–15 digits), national with a trunk "0"
 * (9–12 digits, grouped), North American (NXX-NXX-XXXX), or any 7–15 digits right after a
 * word like "call" or "phone". Plain years, dates, amounts and order numbers are none of these.
 */
export function isPhoneNumber(candidate: string, before: string): boolean {
  const groups = candidate.match(/\d+/g) ?? [];
  const digits = groups.join("");
  const lens = groups.map((g) => g.length).join("-");
  // Dates and US social security numbers (3-2-4) are not phones.
  if (/^(?:4-2-2|2-2-4|2-2-2|3-2-4)$/.test(lens) && !candidate.startsWith("+")) return false;
  if (candidate.startsWith("+")) return digits.length >= 8 && digits.length <= 15;
  if (PHONE_CONTEXT.test(before)) return digits.length >= 7 && digits.length <= 15;
  if (groups.length < 2) return false;
  if (digits.startsWith("00")) return digits.length >= 10 && digits.length <= 17;
  if (digits.startsWith("0"))
    return digits.length >= 9 && digits.length <= 12 && groups.every((g) => g.length >= 2);
  const nanp = digits.length === 11 && digits.startsWith("1") ? digits.slice(1) : digits;
  const shapeOk = lens === "3-3-4" || lens === "1-3-3-4";
  return shapeOk && nanp.length === 10 && /^[2-9]\d\d[2-9]/.test(nanp);
}

/** Parentheses in a candidate that belong to the text around it, not to the number. */
function trimParens(match: string): [lead: string, core: string, tail: string] {
  let core = match;
  let lead = "";
  let tail = "";
  const count = (s: string, c: string): number => s.split(c).length - 1;
  if (core.endsWith(")") && count(core, ")") > count(core, "(")) {
    core = core.slice(0, -1);
    tail = ")";
  }
  if (core.startsWith("(") && count(core, "(") > count(core, ")")) {
    core = core.slice(1);
    lead = "(";
  }
  return [lead, core, tail];
}

/** Phone numbers. */
export const redactPhones: Pass = (text, found) =>
  replaceCandidates(text, PHONE, (match, offset) => {
    const [lead, core, tail] = trimParens(match);
    if (!isPhoneNumber(core, text.slice(Math.max(0, offset - 30), offset))) return null;
    found("phone");
    return lead + PLACEHOLDER.phone + tail;
  });
