import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

/** IPv6 syntax check (RFC 4291 text forms, optional trailing dotted IPv4, no zone). */
export function isIPv6(address: string): boolean {
  let text = address;
  let extraGroups = 0;
  const v4 = /(?:^|:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (v4) {
    if (!isIPv4(v4[1]!)) return false;
    text = text.slice(0, text.length - v4[1]!.length) + (text.endsWith(`:${v4[1]}`) ? "0" : "");
    extraGroups = 1; // the IPv4 part is two groups; "0" above stands for one of them
  }
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  if (!groups.every((g) => g.every((x) => /^[0-9A-Fa-f]{1,4}$/.test(x)))) return false;
  const count = groups.reduce((n, g) => n + g.length, 0) + extraGroups;
  return halves.length === 2 ? count <= 7 : count === 8;
}

export function isIPv4(address: string): boolean {
  const parts = address.split(".");
  return parts.length === 4 && parts.every((p) => /^(?:0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

// Colon-separated hex groups, maybe with a trailing dotted IPv4 and a zone ("%eth0").
const IPV6 =
  /(?<![\w:.%])(?:[0-9A-Fa-f]{0,4}:){2,8}(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?:%[A-Za-z0-9_-]{1,32})?(?![\w:]|\.\d)/g;
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)/g;
// "version 1.2.3.4", "build 10.0.1.2": four-part versions are not addresses; nor are
// "section 4.2.1.3", "§ 1.2.3.4" and other numbered parts of a document.
const VERSION_CONTEXT =
  /(?:\bv|\bversion|\bver\.?|\bbuild|\brelease|\bfirmware|\brev\.?|\bOID|\bsection|\bsect?\.|§|\bclause|\bchapter|\bch\.|\bparagraph|\bpara\.|\bfigure|\bfig\.|\btable|\bappendix|\bstep)\s{0,2}:?\s{0,2}$/i;

function ipv6IsPersonal(candidate: string): boolean {
  const address = candidate.replace(/%.*$/, "");
  if (!isIPv6(address)) return false;
  if (address === "::" || address === "::1") return false; // unspecified, loopback
  // "a::b" in C++/Rust paths is valid IPv6 syntax; real addresses have a digit or 3+ groups.
  const groups = address.split(":").filter(Boolean).length;
  return /\d/.test(address) || groups >= 3;
}

/** Loopback, "any", broadcast and netmasks say nothing about anybody. */
function ipv4IsPersonal(address: string): boolean {
  if (address.startsWith("127.") || address === "0.0.0.0" || address === "255.255.255.255") return false;
  const bits = address
    .split(".")
    .map((p) => Number(p).toString(2).padStart(8, "0"))
    .join("");
  return !/^1+0*$/.test(bits) || !address.startsWith("255."); // a netmask: ones then zeros
}

/** IPv6 then IPv4 addresses (IPv6 first: it may end with a dotted IPv4). */
export const redactIps: Pass = (input, found) => {
  const text = replaceCandidates(input, IPV6, (match) => {
    if (!ipv6IsPersonal(match)) return null;
    found("ip");
    return PLACEHOLDER.ip;
  });
  return replaceCandidates(text, IPV4, (match, offset) => {
    if (!isIPv4(match) || !ipv4IsPersonal(match)) return null;
    if (VERSION_CONTEXT.test(text.slice(Math.max(0, offset - 20), offset))) return null;
    found("ip");
    return PLACEHOLDER.ip;
  });
};
