// The host → webview pipe, batched: every postMessage costs a structured clone and a hop
// through the workbench's renderer, so a busy turn's many small messages travel together.
// A message goes at once when the pipe was idle for an interval; after that, what comes
// within the interval is queued and sent as one `batch` message (order kept).

import type { HostToWebview } from "../model/messages";
import { realClock, throttle, type Clock } from "../throttle";

/** How long messages are held after one was sent: about one animation frame. */
export const BATCH_INTERVAL_MS = 16;

/** Wrap `post` so that messages go at most one `post` per `intervalMs`. */
export function batchedPost(
  post: (message: HostToWebview) => void,
  intervalMs = BATCH_INTERVAL_MS,
  clock: Clock = realClock,
): (message: HostToWebview) => void {
  let queue: HostToWebview[] = [];
  const flush = throttle(
    () => {
      const messages = queue;
      queue = [];
      post(messages.length === 1 ? (messages[0] as HostToWebview) : { type: "batch", messages });
    },
    intervalMs,
    clock,
  );
  return (message) => {
    queue.push(message);
    flush.request();
  };
}
