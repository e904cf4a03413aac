import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applyReplacement, middleReplacement } from "../../model/textChange";

describe("the one replacement between two texts", () => {
  test("equal texts need none", () => {
    assert.equal(middleReplacement("abc\n", "abc\n"), null);
  });

  test("an unsaved line at the end is one insertion there", () => {
    const disk = "def greet():\n    return 'Hi there'\n";
    const mine = `${disk}# my unsaved note\n`;
    assert.deepEqual(middleReplacement(disk, mine), { start: disk.length, end: disk.length, text: "# my unsaved note\n" });
  });

  test("edits at both ends: the middle is replaced, the common head and tail kept", () => {
    const r = middleReplacement("one\ntwo\nthree\n", "ONE\ntwo\nthree!\n");
    assert.deepEqual(r, { start: 0, end: 13, text: "ONE\ntwo\nthree!" });
  });

  test("a cut never splits a surrogate pair or a CRLF", () => {
    // "😀" and "😃" share their first code unit
    const r = middleReplacement("a😀b", "a😃b");
    assert.ok(r);
    assert.equal(r.start, 1, "the pair is replaced whole");
    assert.equal(r.text, "😃");
    const crlf = middleReplacement("a\r\nb", "a\r\r\nb");
    assert.ok(crlf);
    assert.notEqual(crlf.start, 2, "no cut between \\r and \\n");
    assert.equal(applyReplacement("a\r\nb", crlf), "a\r\r\nb");
  });

  test("applying it always gives the new text", () => {
    const samples = ["", "a", "ab", "aab", "abab", "x\r\ny", "😀😀", "héllo wörld", "abcabc"];
    for (const from of samples) {
      for (const to of samples) {
        const r = middleReplacement(from, to);
        assert.equal(r === null ? from : applyReplacement(from, r), to, `${JSON.stringify(from)} -> ${JSON.stringify(to)}`);
        if (r !== null) {
          assert.ok(r.start <= r.end && r.end <= from.length);
        }
      }
    }
  });
});
