import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { containsPii, redact } from "./redaction";
import { scaledBudget } from "../testing/core/calibrated-budget";

const out = (text: string): string => redact(text).text;

describe("redact: each kind", () => {
  it("emails, keeping the punctuation around them", () => {
    expect(out("Email john.doe+x@mail.example.co.uk.")).toBe("Email [EMAIL].");
    expect(out("<Jane@Example.ORG>, josé@exämple.de")).toBe("<[EMAIL]>, [EMAIL]");
    expect(redact("a@b.io and c@d.io").findings).toEqual([{ kind: "email", count: 2 }]);
    expect(out("GET /users?email=jane.doe%40gmail.com&x=1")).toBe("GET /users?email=[EMAIL]&x=1");
    // File names and the SSH account of code hosts are not addresses.
    for (const n of [
      '<img src="icon@2x.png" srcset="icon@3x.webp 3x">',
      "git@github.com:electron/electron.git",
      "ssh -T git@gitlab.com",
      "lodash@4.17.21/fp.js",
    ])
      expect(out(n), n).toBe(n);
  });

  it("phones: international and national formats, not years, dates or order numbers", () => {
    for (const p of [
      "+1 (415) 555-2671",
      "+14155552671",
      "+44 20 7946 0958",
      "+33 6 12 34 56 78",
      "+49 (0)30 1234 5678",
      "020 7946 0958",
      "06.12.34.56.78",
      "(415) 555-2671",
      "415-555-2671",
      "1-415-555-2671",
      "0049 89 1234567",
    ]) {
      expect(out(`call ${p} now`), p).toBe("call [PHONE] now");
      expect(out(`Number: ${p}.`), p).toBe("Number: [PHONE].");
    }
    expect(out("text me: 5558675309")).toBe("text me: [PHONE]");
    expect(out("Il mio cellulare è 347 123 4567")).toBe("Il mio cellulare è [PHONE]");
    expect(out("电话：13812345678")).toBe("电话：[PHONE]");
    for (const n of [
      "in 2024",
      "on 2024-01-15",
      "01/02/2024",
      "order #123456789",
      "12345",
      "1 234 567 people",
      "10:30:45",
      "ISBN 978-3-16-148410-0",
      "123-456-7890",
    ]) {
      expect(out(n), n).toBe(n);
    }
    // An SSN's shape is not a phone: it is a national id (common/redaction/national-ids.ts).
    expect(redact("078-05-1120").findings).toEqual([{ kind: "national-id", count: 1 }]);
  });

  it("cards: Luhn-valid, grouped like cards, of a card network", () => {
    expect(out("card 4111 1111 1111 1111 exp 12/26")).toBe("card [CARD] exp 12/26");
    expect(out("4111-1111-1111-1111")).toBe("[CARD]");
    expect(out("amex 378282246310005 / 3782 822463 10005")).toBe("amex [CARD] / [CARD]");
    expect(out("4111 1111 1111 1111 2024")).toBe("[CARD] 2024");
    expect(out("4111 1111 1111 1112")).toBe("4111 1111 1111 1112"); // Luhn fails
    expect(out("1234 5678 9012 3452")).toBe("1234 5678 9012 3452"); // Luhn-valid, but no network starts with 1
    expect(out("4111 11111 111 1111")).toBe("4111 11111 111 1111"); // not grouped like a card
  });

  it("IBANs: mod-97 validated, exact country length", () => {
    expect(out("IBAN DE89 3704 0044 0532 0130 00 is mine")).toBe("IBAN [IBAN] is mine");
    expect(out("GB82WEST12345698765432; FR1420041010050500013M02606")).toBe("[IBAN]; [IBAN]");
    expect(out("de89 3704 0044 0532 0130 00")).toBe("[IBAN]");
    expect(out("DE88 3704 0044 0532 0130 00")).toBe("DE88 3704 0044 0532 0130 00");
  });

  it("IPv4 and IPv6, not loopback, masks, versions or C++ scopes", () => {
    expect(out("from 203.0.113.7, to 10.0.0.1:8080.")).toBe("from [IP], to [IP]:8080.");
    expect(out("ssh [2001:db8::ff00:42:8329]:22 fe80::1%eth0 ::ffff:192.0.2.1")).toBe(
      "ssh [[IP]]:22 [IP] [IP]",
    );
    expect(out("2001:0db8:85a3:0000:0000:8a2e:0370:7334")).toBe("[IP]");
    for (const n of [
      "127.0.0.1",
      "0.0.0.0",
      "255.255.255.0",
      "version 1.2.3.4",
      "v1.2.3.4",
      "1.3.6.1.4.1",
      "120.0.6099.109",
      "std::vector a::b",
      "::1",
      "12:30:45",
      "00:1A:2B:3C:4D:5E",
      "see section 4.2.1.3",
      "§ 1.2.3.4",
    ]) {
      expect(out(n), n).toBe(n);
    }
  });

  it("secrets: prefixed keys, JWTs, bearer tokens, key=value, private keys, URL passwords", () => {
    const jwt =
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    const cases: [string, string][] = [
      ["key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "key [SECRET]"],
      ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[SECRET]"],
      ["xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[SECRET]"],
      ["AKIAIOSFODNN7EXAMPLE", "[SECRET]"],
      ["AIzaSyD-1234567890abcdefghijklmnopqrstu", "[SECRET]"],
      [`jwt ${jwt}`, "jwt [SECRET]"],
      ["Authorization: Bearer abc.def-123_XYZ.tokenvalue99", "Authorization: Bearer [SECRET]"],
      ["api_key=0123456789abcdef0123456789abcdef", "api_key=[SECRET]"],
      ['{"client_secret": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"}', '{"client_secret": "[SECRET]"}'],
      ['password = "correct horse battery staple"', 'password = "[SECRET]"'],
      ["password: hunter2", "password: [SECRET]"],
      ["postgres://admin:s3cr3t@db.example.com:5432/app", "postgres://[SECRET]@db.example.com:5432/app"],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIEow==\n-----END RSA PRIVATE KEY-----\nnext", "[SECRET]\nnext"],
      ["redis://:s3cr3t-pw@cache:6379/0", "redis://[SECRET]@cache:6379/0"],
      [
        "https://hooks.slack.com/services/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",
        "https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/[SECRET]",
      ],
      ["sid SK0123456789abcdef0123456789abcdef", "sid [SECRET]"],
      ["api:key-0123456789abcdef0123456789abcdef", "api:[SECRET]"],
      ["bot.run('MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs')", "bot.run('[SECRET]')"],
      [
        "AccountName=x;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5+/==;Suffix=y",
        "AccountName=x;AccountKey=[SECRET];Suffix=y",
      ],
      ["key: W6cQGS09U0wn7dhTpHVEN1Nk", "key: [SECRET]"],
      ["SMTP_PASS=yT4!rW9zq@Lm", "SMTP_PASS=[SECRET]"],
      ["the wifi password is S3cr3t_Pa55, thanks", "the wifi password is [SECRET], thanks"],
      ["Mein Passwort ist Sonnenblume!77.", "Mein Passwort ist [SECRET]."],
      ["client secret Zm9vYmFyYmF6cXV4MTIzNDU2", "client secret [SECRET]"],
      ["mysql -u root -p'Kx9!mQ2#wLz' shop", "mysql -u root -p'[SECRET]' shop"],
      ["psql --password Tr0ub4dor&3 -h db", "psql --password [SECRET] -h db"],
      ["curl -u bob:Ab3dEf6hIj9kLm2n https://x.io", "curl -u bob:[SECRET] https://x.io"],
    ];
    for (const [input, expected] of cases) expect(out(input), input).toBe(expected);
    for (const n of [
      "sk-learn-pipeline-for-beginners",
      "password: string;",
      "max_tokens=256",
      "The token: is valid",
      "Bearer of bad news",
      "xoxb-not-a-real-token",
      "commit 3f786850e387550fdab836ed7e6dc881de23001b",
      "the password is incorrect, try again",
      "pass: 3/5 tests",
      "mkdir -p src/components/Button2",
      "docker run -u 1000:1000 -u node:node -p8080:80 img",
      "docker login --password-stdin",
      "key: 550e8400-e29b-41d4-a716-446655440000",
      "<li key={item.id}>",
      "SKU SK12345678901234567890123456789012",
    ]) {
      expect(out(n), n).toBe(n);
    }
  });

  it("home paths: the user name only, the structure stays", () => {
    expect(out("/home/alice/projects/x.ts")).toBe("/home/[USER]/projects/x.ts");
    expect(out("at f (/Users/mike.ross/dev/a.js:1:2)")).toBe("at f (/Users/[USER]/dev/a.js:1:2)");
    expect(out("C:\\Users\\John Smith\\Documents\\a.txt")).toBe("C:\\Users\\[USER]\\Documents\\a.txt");
    expect(out('"C:\\\\Users\\\\eve\\\\x"')).toBe('"C:\\\\Users\\\\[USER]\\\\x"');
    expect(out("C:/Users/bob/x and /mnt/c/Users/priya/y")).toBe(
      "C:/Users/[USER]/x and /mnt/c/Users/[USER]/y",
    );
    for (const n of ["/home/user/.bashrc", "/Users/Shared/x", "https://example.com/home/about", "~/notes"])
      expect(out(n), n).toBe(n);
  });
});

describe("redact: random-looking tokens (entropy rule) and password contexts", () => {
  it("redacts high-entropy tokens with an unknown prefix or none at all", () => {
    const cases: [string, string][] = [
      [
        "doctl auth init -t dop_v1_a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd1",
        "doctl auth init -t [SECRET]",
      ],
      ["Authorization: lin_api_9QeWJKY40uvSwMFLZDe1f8rESQedUStPKR0CsTy4", "Authorization: [SECRET]"],
      [
        'new Client({ auth: "secret_Qwb8DwkNhFdnXsiVpzz63FfkCzJr4i0B3JrTAwR4y9o" })',
        'new Client({ auth: "[SECRET]" })',
      ],
      ["I pasted jfljoQoaF1LlqsajAIxNKu8iS2G8NPRVdD53X83R and it failed", "I pasted [SECRET] and it failed"],
      [
        "the value was YYZYn9ZhyiA4uoRgnatmUdjAWtGSU8po+799NksnRH9u= (copied)",
        "the value was [SECRET] (copied)",
      ],
      ["X-Custom: Hbn88HxjSI6bWHtP3fS2qHx6kwXoIIXG", "X-Custom: [SECRET]"],
      // In a URL only the random segment goes.
      [
        "GET https://api.telegram.org/bot123456789:AAHbn88HxjSI6bWHtP3fS2qHx6kwXoIIXGk/getMe",
        "GET https://api.telegram.org/bot123456789:[SECRET]/getMe",
      ],
      [
        "az devops login with PAT vompzom7wbbr6qmw4wxfogo6mvn6a6wfhym6l3vfz5zfkkibj5j6",
        "az devops login with PAT [SECRET]",
      ],
    ];
    for (const [input, expected] of cases) expect(out(input), input).toBe(expected);
  });

  it("redacts passwords after sshpass, registry logins, pw:, net use/user, smbclient and login pairs", () => {
    const cases: [string, string][] = [
      ["sshpass -p 'N0tMyR3alPw' ssh raspberrypi", "sshpass -p '[SECRET]' ssh raspberrypi"],
      ["sshpass -p Rb7#kL2q ssh -p 2222 host", "sshpass -p [SECRET] ssh -p 2222 host"],
      ["docker login -u bob -p Dkr8!passW registry.io", "docker login -u bob -p [SECRET] registry.io"],
      ["pw: Q7v!x2Lp", "pw: [SECRET]"],
      ["pwd: Tz8&mw3Qa", "pwd: [SECRET]"],
      ["PGPASSWORD=Xy7pQ2wZ psql -h db", "PGPASSWORD=[SECRET] psql -h db"],
      [
        "net use Z: \\\\srv\\share /user:CORP\\jdoe P4ssw0rd!",
        "net use Z: \\\\srv\\share /user:CORP\\jdoe [SECRET]",
      ],
      ["net user svc_backup N3wP@ss2025 /add", "net user svc_backup [SECRET] /add"],
      ["smbclient //nas/backup -U jdoe%Summer2024!", "smbclient //nas/backup -U jdoe%[SECRET]"],
      ["login admin / Adm1n@2024", "login admin / [SECRET]"],
    ];
    for (const [input, expected] of cases) expect(out(input), input).toBe(expected);
  });

  it("keeps hashes, ids, identifiers, versions, integrity strings and public URLs", () => {
    for (const n of [
      // git commits (full and short), a sha256 checksum line, a Docker digest, a trace id
      "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (a1b2c3d)",
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  macaron-1.4.2-arm64.dmg",
      "nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
      "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 x-request-id: 7b2c5a0f9e3d41c8b6a4f1e2d3c4b5a6",
      "cache_4bf92f3577b34da6a3ce929d0e0e4736.json and chunk-0123456789abcdef0123456789abcdef.js",
      // UUIDs, GUIDs, ULIDs
      "request-id: 3f1c2e4a-9b7d-4c6e-8a2f-1d3b5c7e9f0a {3F2504E0-4F89-11D3-9A0C-0305E82C3301}",
      "id 01ARZ3NDEKTSV4RRFFQ69G5FAV",
      // semver, dates, hashed file names, CSS colours, short base64
      "upgraded to v2.13.0-beta.4+build.20240515 on 2024-05-15T10:22:31Z",
      "Loading chunk vendors~main.8f3a2b1c9d4e5f6a7b8c.chunk.js, main.a1b2c3d4.js, index-BfK3x9Qa.js",
      "colours #1a2b3c, #FFAA00 and #0f0",
      "data:text/plain;base64,SGVsbG8gV29ybGQh and dXNlcm5hbWU6cGFzc3dvcmQ",
      // npm / SRI integrity strings and CSP hashes are public content hashes
      '"integrity": "sha512-Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY+uCu3ZR=="',
      '"integrity": "sha512-/XKpKDakL//LZ66bq1XsZOswuqeI5MZqPLDu18o3XdkU1fNJ7bdPtzgnc4ZNS+bBGHV0FJG8jjb8SwcC3nNVQQ=="',
      "script-src 'sha256-B2yPHKaXnvFWtRChIbabYmUBFZdVfKKXHbWtWidDVF8='",
      // SSH public keys
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy@ci",
      // public docs
      "see https://developer.mozilla.org/en-US/docs/Web/API/AbortController/abort_static",
      "https://github.com/electron/electron/blob/9fceb02d0ae598e95dc970b74767f19372d61af8/shell/app.cc#L14",
      "chrome-extension://fmkadmapgofadopljbjfkapdkoienihi/popup.html",
      // long identifiers, even with digits
      "TypeError in getUserAccountSettingsHandlerForAdminPanel2 at line 88",
      "useEffectCleanupFunctionV8Isolate64 and HTMLCanvasElementRenderingContext2DWebGLExtension",
      "const MAX_CONCURRENT_DOWNLOADS_PER_HOST_V2 = 4;",
      "TheBloke/Mistral-7B-Instruct-v0.2-GGUF/mistral-7b-instruct-v0.2.Q4_K_M.gguf",
      // ids of LLM and payment APIs (under 30 characters after the prefix)
      "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT msg_01XFDUDYJgAACzvnptvVoYEL pi_3MtwBwLkdIwHu7ix28a3tqPa",
      // password contexts without a password
      "sshpass not installed, use ssh -p 2222 deploy@buildhost",
      "sshpass -f ~/.sshpw ssh deploy@buildhost",
      "docker login -u bob registry.example.com",
      "net use Z: \\\\fileserver\\team /persistent:yes",
      "net use and net user are Windows commands",
      "login page / 2FA flow, login flow / v2.1.3-beta",
      "pw: string",
      "const pw = new PasswordWatcher(opts);",
      "the PAT field is empty",
    ])
      expect(out(n), n).toBe(n);
  });
});

describe("redact: properties", () => {
  const piiFragments = fc.constantFrom(
    "alice@example.com",
    "+1 (415) 555-2671",
    "4111 1111 1111 1111",
    "DE89 3704 0044 0532 0130 00",
    "203.0.113.7",
    "2001:db8::1",
    "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
    "password=hunter22",
    "/home/bob/x",
    "C:\\Users\\Ann Lee\\d",
    "Bearer abc123def456ghi",
    "2024-01-15",
    "1.2.3.4",
    "[EMAIL]",
    "@",
    ".",
    ":",
    "-",
    " ",
    "/",
    "\\",
    "0",
    "9",
  );
  const text = fc
    .array(fc.oneof(piiFragments, fc.string({ maxLength: 6 })), { maxLength: 12 })
    .map((parts) => parts.join(""));

  it("is idempotent: redacting twice equals redacting once", () => {
    fc.assert(
      fc.property(text, (t) => out(out(t)) === out(t)),
      { numRuns: 2000 },
    );
  });

  it("containsPii agrees with the findings, and is false on redacted output", () => {
    fc.assert(
      fc.property(text, (t) => {
        const r = redact(t);
        return containsPii(t) === r.findings.length > 0 && !containsPii(r.text);
      }),
      { numRuns: 500 },
    );
  });

  it("finishes 1 MB adversarial inputs quickly (no catastrophic backtracking)", () => {
    const units = [
      "1",
      "1 ",
      "+1 ",
      "(1)",
      "4111 ",
      "a",
      "a@",
      "a.a@a.",
      "a:",
      "1:",
      "1::1:",
      "1.1.1.",
      "eyJaaaaaaaaa.",
      "sk-",
      "sk-aaaaaaaaaaaaaaaaaaaaaaa ",
      "/home/",
      "/home/a",
      "C:\\Users\\",
      "C:\\Users\\a b",
      "-----BEGIN PRIVATE KEY-----",
      'password: "',
      "token=a",
      "Bearer ",
      "://a:b",
      "DE89 ",
      "DE89A",
      "a%40",
      "password is ",
      "secret ",
      " -p'",
      " -u a:",
      " --password ",
      "key: ",
      "hooks.slack.com/services/a/",
      "SK0",
      "aB3",
      "aB3-",
      "aB3/",
      "x_",
      "Ab3dEf6hIj9kLm2nOp5qRs8tUvWx12/",
      " -p a",
      "sshpass -p ",
      "docker login -p ",
      "net use a ",
      "login a / ",
      " -U a%",
    ];
    for (const unit of units) {
      const input = unit.repeat(Math.ceil(1_000_000 / unit.length));
      // Linear passes take well under a second per MB on the reference machine (the bound scales
      // with this one's measured speed); a quadratic one would take hours.
      const budget = scaledBudget(8000);
      const start = performance.now();
      redact(input);
      expect(performance.now() - start, JSON.stringify(unit)).toBeLessThan(
        Math.max(budget, scaledBudget(8000)),
      );
    }
  }, 60_000);
});
