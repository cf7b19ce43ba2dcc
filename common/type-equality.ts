/**
 * Compile-time type equality, deep: for the few places where a hand-written type and a zod
 * schema describe one message (common/engine-message-schema.ts). A check that compares only the
 * top-level keys, or assignability both ways, misses an optional field added on one side only in
 * a nested object (`{ a?: { b?: number; c?: number } }` and `{ a?: { b?: number } }` are each
 * assignable to the other); this one does not. Types only: nothing here exists at run time.
 */

/**
 * `T` with intersections flattened and `readonly` dropped at every depth, so that two ways of
 * writing one shape (an interface, an intersection, zod's inferred object) compare equal, while
 * every field keeps its optionality and type. Unions are normalized member by member.
 */
export type Normalize<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer E)[]
    ? Normalize<E>[]
    : T extends object
      ? { -readonly [K in keyof T]: Normalize<T[K]> }
      : T;

/**
 * true when A and B are the same type, false otherwise: TypeScript's own identity relation (the
 * generic-function trick), which tells `{ a?: number }` from `{}` and `any` from everything else.
 */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** true when A and B describe the same shape at every depth (see Normalize), false otherwise. */
export type DeepEqual<A, B> = Equal<Normalize<A>, Normalize<B>>;
