// "Now, or once at the end of the interval": the status bar's redraws and the chat's batched
// messages both go at most once per interval, at once when the last went an interval ago.
// Without `vscode`, for the unit tests.

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
}

export const realClock: Clock = { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms) };

export interface Throttle {
  /** Run now if the last run was an interval ago, else once when the interval ends (requests
   * meanwhile share that run). */
  request(): void;
  /** Drop a run still waiting. */
  cancel(): void;
}

export function throttle(run: () => void, intervalMs: number, clock: Clock = realClock): Throttle {
  let last = -Infinity;
  let waiting = 0; // which wait is current: a cancelled one does nothing when its time comes
  let scheduled = false;
  const fire = (): void => {
    scheduled = false;
    last = clock.now();
    run();
  };
  return {
    request: () => {
      if (scheduled) {
        return;
      }
      const wait = last + intervalMs - clock.now();
      if (wait <= 0) {
        fire();
        return;
      }
      scheduled = true;
      const id = ++waiting;
      clock.setTimeout(() => {
        if (id === waiting) {
          fire();
        }
      }, wait);
    },
    cancel: () => {
      scheduled = false;
      waiting++;
    },
  };
}
