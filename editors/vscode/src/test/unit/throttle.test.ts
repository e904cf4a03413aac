import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { throttle } from "../../throttle";
import { fakeClock } from "./fakeClock";

describe("throttle: now, or once at the end of the interval", () => {
  test("runs at once when idle; requests within the interval share one run at its end", () => {
    const clock = fakeClock();
    let runs = 0;
    const t = throttle(() => runs++, 100, clock);
    t.request();
    assert.equal(runs, 1);
    t.request();
    t.request();
    clock.advance(99);
    assert.equal(runs, 1);
    clock.advance(1);
    assert.equal(runs, 2);
    clock.advance(100);
    t.request();
    assert.equal(runs, 3, "an interval after the last run: at once again");
  });

  test("a cancelled run does not happen; the next request waits out the interval", () => {
    const clock = fakeClock();
    let runs = 0;
    const t = throttle(() => runs++, 100, clock);
    t.request();
    t.request();
    t.cancel();
    clock.advance(50);
    t.request();
    clock.advance(49);
    assert.equal(runs, 1);
    clock.advance(1);
    assert.equal(runs, 2);
    clock.advance(100);
    assert.equal(runs, 2, "the cancelled wait did not run later either");
  });
});
