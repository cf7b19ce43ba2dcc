import { z } from "zod";

/**
 * z.record(key, value) that keeps every key it is sent. zod's record skips an own `__proto__`
 * key (JSON.parse and a structured clone make one; it cannot be set on the plain object zod
 * builds), so `{"__proto__": 3}` would parse as `{}`: a field dropped silently from a strict
 * request. Here such a key is an error with `protoMessage`. A preprocess step, so the JSON Schema
 * generated from the request (GET /api/openapi.json) is still the record's.
 */
export function recordKeepingKeys<K extends z.ZodType<PropertyKey>, V extends z.ZodType>(
  key: K,
  value: V,
  protoMessage: string,
) {
  return z.preprocess(
    (raw, ctx) => {
      if (typeof raw === "object" && raw !== null && Object.hasOwn(raw, "__proto__"))
        ctx.addIssue({ code: "custom", message: protoMessage, input: raw });
      return raw;
    },
    z.record(key, value),
  );
}
