import { afterAll, describe, expect, it } from "vitest";
import { autoFailoverAvailable, type Formation, startFormation } from "../helpers/pg-auto-failover.ts";

describe.skipIf(!autoFailoverAvailable)("formation smoke", () => {
  let f: Formation;
  afterAll(async () => f?.stop());
  it("starts, fails over, rejoins, switches over", async () => {
    let t = Date.now();
    f = await startFormation();
    console.log("formation up", Date.now() - t);
    const { primary, standby } = await f.stable();
    console.log(primary.name, standby.name, await f.sql(primary, "show synchronous_standby_names"));
    t = Date.now();
    await f.kill(primary);
    await f.waitForState((ns) => ns.some((n) => n.nodename === standby.name && n.current_group_state === "wait_primary"), "promoted");
    console.log("failover", Date.now() - t);
    t = Date.now();
    f.start(primary);
    const s2 = await f.stable();
    console.log("rejoin", Date.now() - t, s2.primary.name);
    t = Date.now();
    await f.switchover();
    const s3 = await f.stable();
    console.log("switchover", Date.now() - t, s3.primary.name);
    expect(s3.primary.name).toBe(primary.name);
  }, 400_000);
});
