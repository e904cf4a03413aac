import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { earlierStart, initialStart, trimmedStart, type WindowLimits } from "../../webview/timelineWindow";

describe("timeline window", () => {
  const limits: WindowLimits = { keep: 150, max: 200, step: 100 };

  test("a long timeline shows its end; growing past the limit trims back to the window", () => {
    assert.equal(initialStart(40, limits), 0);
    assert.equal(initialStart(2000, limits), 1850);
    assert.equal(trimmedStart(1850, 2000, limits), 1850);
    assert.equal(trimmedStart(1850, 2050, limits), 1850);
    assert.equal(trimmedStart(1850, 2051, limits), 1901);
  });

  test("earlier entries come in steps down to the first", () => {
    assert.equal(earlierStart(1850, limits), 1750);
    assert.equal(earlierStart(60, limits), 0);
    assert.equal(earlierStart(0, limits), 0);
  });
});
