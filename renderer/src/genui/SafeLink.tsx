import type { ReactNode } from "react";
import { SafeLink as SharedSafeLink } from "../chat/safe-markdown";
import { useGenui } from "./genui-context";

/** A Link component's target, under the chat's link policy (see chat/safe-markdown). */
export function SafeLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <SharedSafeLink href={href} platform={useGenui().platform}>
      {children}
    </SharedSafeLink>
  );
}
