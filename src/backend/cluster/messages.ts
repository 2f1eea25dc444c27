/**
 * The messages between a cluster's primary and its workers (over node:cluster's IPC channel).
 * Every message carries the {@link TAG} key, so an application's own IPC messages pass untouched.
 */

/** Key marking this platform's cluster messages. */
export const TAG = "service-auth:cluster";

/** Worker → primary → every other worker: commit `seq` is in the SQLite commit log. */
export interface CommitMessage {
  [TAG]: "commit";
  seq: number;
}

/** Primary → worker: stop gracefully (requests in flight finish), then exit. */
export interface StopMessage {
  [TAG]: "stop";
}

export type ClusterMessage = CommitMessage | StopMessage;

/** Whether `message` is one of this platform's, well-formed (IPC carries whatever a process sends). */
export function isClusterMessage(message: unknown): message is ClusterMessage {
  if (typeof message !== "object" || message === null) return false;
  const kind = (message as Record<string, unknown>)[TAG];
  if (kind === "stop") return true;
  return kind === "commit" && Number.isSafeInteger((message as { seq?: unknown }).seq);
}

export const commitMessage = (seq: number): CommitMessage => ({ [TAG]: "commit", seq });
export const STOP: StopMessage = { [TAG]: "stop" };
