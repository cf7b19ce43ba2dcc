import type { DomainHandlers } from "../handlers";
import type { HubService } from "./hub-service";

/** The hub.* methods (electron/api/methods.ts) on the hub service. */
export function hubHandlers(hub: HubService): DomainHandlers<"hub"> {
  return {
    "hub.search": ({ query, limit }) => hub.search(query, limit),
    "hub.recommended": () => hub.recommended(),
    "hub.repo": ({ repo }) => hub.repo(repo),
    "hub.fit": (input) => hub.fit(input),
    "hub.download": ({ repo, file }) => hub.download(repo, file),
    "hub.downloads": () => hub.downloads.list(),
    "hub.pause": ({ id }) => hub.downloads.pause(id),
    "hub.resume": ({ id }) => hub.downloads.resume(id),
    "hub.cancel": ({ id }) => hub.downloads.cancel(id),
    "hub.acceptUnverified": ({ id }) => hub.downloads.acceptUnverified(id),
    "hub.tokenStatus": () => hub.tokenStatus(),
    "hub.setToken": ({ token }) => hub.setToken(token),
    "hub.adaptersForBase": ({ query }) => hub.adaptersForBase(query),
    "hub.installAdapter": ({ repo, file }) => hub.installAdapter(repo, file),
  };
}
