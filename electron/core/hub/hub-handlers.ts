import { ApiError } from "../../api";
import type { DomainHandlers } from "../handlers";

// PLACEHOLDER while the hub is being built (issue 11): replaced by the real handlers.
const todo = (): never => {
  throw new ApiError("internal", "The model hub is not built yet.");
};

export function hubHandlers(): DomainHandlers<"hub"> {
  return {
    "hub.search": todo,
    "hub.recommended": todo,
    "hub.repo": todo,
    "hub.fit": todo,
    "hub.download": todo,
    "hub.downloads": todo,
    "hub.pause": todo,
    "hub.resume": todo,
    "hub.cancel": todo,
    "hub.tokenStatus": todo,
    "hub.setToken": todo,
    "hub.adaptersForBase": todo,
    "hub.installAdapter": todo,
  };
}
