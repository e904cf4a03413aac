import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FRAME_MS, Redraw, type RedrawClock, TOOLS_MS } from "../../webview/redraw";
import { fakeClock } from "./fakeClock";

/** A hand-moved clock whose frames and microtasks run when the test says. */
function redrawClock(): RedrawClock & { advance(ms: number): void; runMicrotasks(): void; runFrame(): void } {
  const clock = fakeClock();
  let micro: (() => void)[] = [];
  let frames: (() => void)[] = [];
  return {
    ...clock,
    frame: (fn) => frames.push(fn),
    microtask: (fn) => micro.push(fn),
    runMicrotasks() {
      const due = micro;
      micro = [];
      due.forEach((fn) => fn());
    },
    runFrame() {
      const due = frames;
      frames = [];
      due.forEach((fn) => fn());
    },
  };
}

function setup(busy: boolean) {
  const clock = redrawClock();
  const draws: string[][] = [];
  const redraw = new Redraw((keys) => draws.push([...keys].sort()), () => busy, clock);
  return { clock, draws, redraw };
}

describe("Redraw: when the chat draws what changed", () => {
  test("after a quiet frame a change is drawn once the message is handled, not a frame later", () => {
    const { clock, draws, redraw } = setup(true);
    redraw.invalidate(["m:1"]);
    redraw.invalidate(["m:1", "status"]);
    clock.runMicrotasks();
    assert.deepEqual(draws, [["m:1", "status"]]);
  });

  test("within a frame of a redraw, a change waits for the next frame", () => {
    const { clock, draws, redraw } = setup(false);
    redraw.invalidate(["m:1"]);
    clock.runMicrotasks();
    clock.advance(FRAME_MS - 1);
    redraw.invalidate(["m:1"]);
    clock.runMicrotasks();
    assert.equal(draws.length, 1);
    clock.runFrame();
    assert.deepEqual(draws, [["m:1"], ["m:1"]]);
  });

  test("while a turn runs, tool calls alone are drawn at most every TOOLS_MS, all at once", () => {
    const { clock, draws, redraw } = setup(true);
    redraw.invalidate(["t:1", "timeline"]);
    clock.runMicrotasks();
    for (let k = 2; k < 50; k++) {
      clock.advance(1);
      redraw.invalidate([`t:${k}`]);
      clock.runMicrotasks();
      clock.runFrame();
    }
    assert.equal(draws.length, 1);
    clock.advance(TOOLS_MS);
    clock.runFrame();
    assert.equal(draws.length, 2);
    assert.equal(draws[1]?.length, 48);
  });

  test("text or a status change is not held back by the tool calls' interval", () => {
    const { clock, draws, redraw } = setup(true);
    redraw.invalidate(["t:1"]);
    clock.runMicrotasks();
    clock.advance(FRAME_MS);
    redraw.invalidate(["t:2"]);
    redraw.invalidate(["status"]);
    clock.runMicrotasks();
    assert.deepEqual(draws, [["t:1"], ["status", "t:2"]]);
    // the overtaken tool-calls timer draws nothing more when its time comes
    clock.advance(TOOLS_MS);
    clock.runFrame();
    clock.runMicrotasks();
    assert.equal(draws.length, 2);
  });

  test("a tool-calls wait overtaken by a draw does not cut a later wait short", () => {
    const { clock, draws, redraw } = setup(true);
    redraw.invalidate(["t:1"]);
    clock.runMicrotasks();
    clock.advance(20);
    redraw.invalidate(["t:2"]); // waits until 100 ms after the first draw
    redraw.invalidate(["status"]); // drawn at once, with t:2
    clock.runMicrotasks();
    clock.advance(10);
    redraw.invalidate(["t:3"]); // waits until 100 ms after that draw
    clock.advance(70); // the first wait's time: nothing is due yet
    clock.runFrame();
    clock.runMicrotasks();
    assert.deepEqual(draws, [["t:1"], ["status", "t:2"]]);
    clock.advance(20);
    clock.runFrame();
    assert.deepEqual(draws, [["t:1"], ["status", "t:2"], ["t:3"]]);
  });

  test("with no turn running, tool calls are drawn at once", () => {
    const { clock, draws, redraw } = setup(false);
    redraw.invalidate(["t:1"]);
    clock.runMicrotasks();
    clock.advance(FRAME_MS);
    redraw.invalidate(["t:2"]);
    clock.runMicrotasks();
    assert.deepEqual(draws, [["t:1"], ["t:2"]]);
  });
});
