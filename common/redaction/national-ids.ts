import { luhnValid } from "./numbers";
import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

// Words that say a number is an identity number ("SSN: 123456789", "SIN 046 454 286").
const ID_CONTEXT =
  /(?:\b(?:ssn|ss#|social security(?: number| no\.?)?|social insurance(?: number| no\.?)?|sin|nin|nino|national insurance(?: number| no\.?)?|taxpayer id|tin|dni|nie|documento|national id|id number)\b[^\n\w]{0,6}(?:(?:is|was|number|no\.?|nr\.?|#)[^\n\w]{0,4}){0,2})$/i;

/**
 * US social security number: AAA-GG-SSSS (dashes or single spaces), or nine digits right after
 * "SSN"/"social security". Area 000, 666 and 900–999, group 00 and serial 0000 are never issued.
 */
const SSN = /(?<![\w.+/-]|\d\s|\+\d{1,3}[ .-]?)(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\w]|[.-]\d|\s\d)/g;

function ssnValid(area: string, group: string, serial: string): boolean {
  if (area === "000" || area === "666" || area[0] === "9") return false;
  return group !== "00" && serial !== "0000";
}

/**
 * Canadian social insurance number: 9 digits, Luhn-valid, first digit not 8 (never issued), grouped
 * 3-3-3 by one kind of separator, or ungrouped right after "SIN"/"social insurance". Not after
 * a country code ("+34 612 345 678" is a phone) nor beside other digit groups (a matrix, a table).
 */
const SIN = /(?<![\w.+/-]|\d\s|\+\d{1,3}[ .-]?)(\d{3})([- ]?)(\d{3})\2(\d{3})(?![\w]|[.-]\d|\s\d)/g;

const PHONE_WORD =
  /(?:tel|phone|mobile|cell|call|fax|número|numero|móvil|telefono|teléfono)\b[^\n\d]{0,12}$/i;

/**
 * UK national insurance number: two letters (not D, F, I, Q, U, V; the second not O; not the
 * prefixes BG, GB, KN, NK, NT, TN, ZZ), six digits (optionally in pairs), a suffix A–D.
 */
const NINO =
  /(?<![A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![A-Za-z0-9])/g;
const NINO_NOT_ISSUED = new Set(["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"]);

/** Spanish DNI (8 digits + check letter) and NIE (X/Y/Z + 7 digits + check letter). */
const DNI = /(?<![A-Za-z0-9])([XYZ]?)(\d{7,8})[- ]?([A-Z])(?![A-Za-z0-9])/g;
const DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";

function dniValid(prefix: string, digits: string, letter: string): boolean {
  if (prefix === "" && digits.length !== 8) return false;
  if (prefix !== "" && digits.length !== 7) return false;
  const number = Number((prefix === "" ? "" : String("XYZ".indexOf(prefix))) + digits);
  return DNI_LETTERS[number % 23] === letter;
}

/** National identity numbers: US SSN, Canadian SIN, UK NINO, Spanish DNI/NIE (checksums where they have one). */
export const redactNationalIds: Pass = (input, found) => {
  const id = (): string => {
    found("national-id");
    return PLACEHOLDER["national-id"];
  };
  const context = (text: string, offset: number): boolean =>
    ID_CONTEXT.test(text.slice(Math.max(0, offset - 40), offset));
  let text = replaceCandidates(input, SSN, (_m, offset, [area, sep, group, serial]) => {
    if (!ssnValid(area!, group!, serial!)) return null;
    // Nine bare digits are an SSN only when the words before say so.
    if (sep === "" && !context(input, offset)) return null;
    return id();
  });
  const afterSsn = text;
  text = replaceCandidates(afterSsn, SIN, (_m, offset, [a, sep, b, c]) => {
    const digits = a! + b! + c!;
    if (digits[0] === "8" || !luhnValid(digits)) return null;
    if (sep === "" && !context(afterSsn, offset)) return null;
    // "Mi número: 612 345 678": a Spanish phone has the same 3-3-3 shape.
    if (PHONE_WORD.test(afterSsn.slice(Math.max(0, offset - 24), offset))) return null;
    return id();
  });
  text = replaceCandidates(text, NINO, (_m, _o, [prefix]) => (NINO_NOT_ISSUED.has(prefix!) ? null : id()));
  return replaceCandidates(text, DNI, (_m, _o, [prefix, digits, letter]) =>
    dniValid(prefix!, digits!, letter!) ? id() : null,
  );
};
