import { describe, expect, it } from "vitest";
import { describeCrashes, RestartPolicy } from "./restart-policy";

describe("RestartPolicy", () => {
  it("says 'in a row' only for crashes with no recovery between them", () => {
    const policy = new RestartPolicy({ maxRapidCrashes: 3, windowMs: 60_000 });
    policy.onCrash(0);
    policy.onCrash(1_000);
    const last = policy.onCrash(2_000);
    expect(last).toMatchObject({ restart: false, recentCrashes: 3, inARow: true });
    expect(describeCrashes(last)).toBe("3 times in a row");
  });

  it("counts crashes separated by good restarts within the window, and says how many in what time", () => {
    const policy = new RestartPolicy({ maxRapidCrashes: 3, windowMs: 60_000 });
    expect(policy.onCrash(0)).toMatchObject({ restart: true, inARow: true });
    policy.onRecovered();
    expect(policy.onCrash(20_000)).toMatchObject({ restart: true, recentCrashes: 2, inARow: false });
    policy.onRecovered();
    const last = policy.onCrash(41_500);
    expect(last).toMatchObject({ restart: false, recentCrashes: 3, inARow: false, spanMs: 41_500 });
    expect(describeCrashes(last)).toBe("3 times within 42 s");
  });

  it("forgets crashes outside the window and after a reset", () => {
    const policy = new RestartPolicy({ maxRapidCrashes: 2, windowMs: 10_000 });
    policy.onCrash(0);
    policy.onRecovered();
    expect(policy.onCrash(20_000)).toMatchObject({
      restart: true,
      recentCrashes: 1,
      inARow: true,
      spanMs: 0,
    });
    policy.reset();
    expect(policy.onCrash(21_000)).toMatchObject({ restart: true, recentCrashes: 1 });
  });
});
