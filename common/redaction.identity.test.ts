/**
 * National identity numbers, street addresses and personal names (issue 27): each class found in
 * the shapes people write it, with its checksum where it has one, and kept out of the look-alikes
 * (dates, phones, code, version numbers). Recall on a held-out corpus: bench/redaction-identity.ts.
 */
import { describe, expect, it } from "vitest";
import { redact } from "./redaction";

const kinds = (text: string) => redact(text).findings.map((f) => f.kind);

describe("national identity numbers", () => {
  it.each([
    ["My SSN is 123-45-6789.", "123-45-6789"],
    ["social security number 321 54 9876 on the form", "321 54 9876"],
    ["SSN: 123456789", "123456789"],
    ["NINO QQ123456C? no: mine is AB 12 34 56 C", "AB 12 34 56 C"],
    ["national insurance JG103759A", "JG103759A"],
    ["My SIN is 046 454 286", "046 454 286"],
    ["SIN 130-692-544 for payroll", "130-692-544"],
    ["DNI 12345678Z", "12345678Z"],
    ["NIE X1234567L", "X1234567L"],
  ])("%s", (text, value) => {
    const out = redact(text);
    expect(out.text).not.toContain(value);
    expect(out.text).toContain("[NATIONAL_ID]");
    expect(kinds(text)).toContain("national-id");
  });

  it.each([
    "Invalid SSN shapes: 000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000",
    "SIN 046 454 287 fails its checksum",
    "order 123456789 shipped", // nine bare digits without a word that says SSN
    "DNI 12345678A has the wrong check letter",
    "Mi número: 612 345 678",
    "Matrix:\n712 773 779\n563 782 979",
    "released 2024-05-06, build 1234",
  ])("leaves alone: %s", (text) => {
    expect(kinds(text)).not.toContain("national-id");
  });
});

describe("street addresses", () => {
  it.each([
    ["I live at 742 Evergreen Terrace, Springfield.", "742 Evergreen Terrace"],
    ["Ship to 1600 Pennsylvania Ave NW, Suite 200, Washington", "1600 Pennsylvania Ave NW, Suite 200"],
    ["221B Baker Street, London", "221B Baker Street"],
    ["12 W 42nd St", "12 W 42nd St"],
    ["Hauptstraße 5, 10115 Berlin", "Hauptstraße 5"],
    ["Karl-Marx-Str. 12a", "Karl-Marx-Str. 12a"],
    ["12 rue de la Paix, 75002 Paris", "12 rue de la Paix"],
    ["Via Roma 10, Milano", "Via Roma 10"],
    ["Send it to P.O. Box 1234", "P.O. Box 1234"],
  ])("%s", (text, value) => {
    const out = redact(text);
    expect(out.text).not.toContain(value);
    expect(kinds(text)).toContain("address");
  });

  it.each([
    "Spring 2024 release",
    "use String 5 times",
    "Chapter 3 The Road",
    "I have 3 big issues on the road map",
    "Route 66 is long",
    "Windows 11 Pro",
  ])("leaves alone: %s", (text) => {
    expect(kinds(text)).not.toContain("address");
  });
});

describe("personal names", () => {
  it.each([
    ["Dr. Amara Okafor approved it", "Amara Okafor"],
    ["Dear Mrs Lindqvist,", "Lindqvist"],
    ["My name is Jordan Blake.", "Jordan Blake"],
    ["Thanks,\nTomasz Nowak", "Tomasz Nowak"],
    ["Email Marcus Oyelaran about it", "Marcus Oyelaran"],
    ["ask Priya's team", "Priya"],
    ["my manager, Brenda Kowalczyk, said no", "Brenda Kowalczyk"],
    ["Send it to Anna van der Berg", "Anna van der Berg"],
  ])("%s", (text, value) => {
    const out = redact(text);
    expect(out.text).not.toContain(value);
    expect(kinds(text)).toContain("name");
  });

  it.each([
    "const x = new Map(); Math.Min(1, 2);",
    "Julia and Ruby are languages",
    "Jan 5 and Jun 7 are dates",
    "The Spring Boot app returns 404",
    "Will it rain in May?",
    "I'm Sure this works",
  ])("leaves alone: %s", (text) => {
    expect(kinds(text)).not.toContain("name");
  });

  it("is idempotent with the new placeholders", () => {
    const text = "Dr. Amara Okafor, 742 Evergreen Terrace, SSN 123-45-6789, SIN 046 454 286";
    const once = redact(text).text;
    expect(redact(once).text).toBe(once);
    expect(redact(once).findings).toEqual([]);
  });
});
