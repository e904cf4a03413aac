// A clock for the unit tests of what waits (throttle, batched messages).

import type { Clock } from "../../throttle";

/** A clock the test moves by hand; due timers run when it passes them. */
export function fakeClock(): Clock & { advance(ms: number): void } {
  let t = 1000;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => t,
    setTimeout(fn, ms) {
      timers.push({ at: t + ms, fn });
      return timers.length;
    },
    advance(ms) {
      t += ms;
      const due = timers.filter((x) => x.at <= t);
      timers = timers.filter((x) => x.at > t);
      due.forEach((x) => x.fn());
    },
  };
}
