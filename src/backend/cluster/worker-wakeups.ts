/**
 * A worker's side of the cluster's commit wake-ups (`CommitWakeups` of the SQLite engine): its
 * commits go to the primary over IPC, which relays them to every other worker (`primary.ts`).
 */
import type { CommitWakeups } from "../storage/sqlite/commit-log.ts";
import { commitMessage, isClusterMessage, TAG } from "./messages.ts";

/** Wake-ups over this worker's IPC channel to the primary. */
export function workerWakeups(): CommitWakeups {
  return {
    publish(seq) {
      // A worker whose primary is gone has nobody to wake; the others read the log anyway.
      if (process.connected) process.send?.(commitMessage(seq), undefined, undefined, () => {});
    },
    subscribe(listener) {
      const onMessage = (message: unknown) => {
        if (isClusterMessage(message) && message[TAG] === "commit") listener(message.seq);
      };
      process.on("message", onMessage);
      return () => process.off("message", onMessage);
    },
  };
}

/**
 * Runs `stop` when the primary asks this worker to stop, or when the primary is gone (the IPC
 * channel closed: nobody would replace or stop this worker any more).
 */
export function onStopRequest(stop: () => void): void {
  process.on("message", (message: unknown) => {
    if (isClusterMessage(message) && message[TAG] === "stop") stop();
  });
  process.once("disconnect", stop);
}
