import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hunkLines, pendingHunks } from "../../model/hunks";
import type { ChatSession } from "../../model/sessionModel";

function session(calls: Record<string, unknown>): ChatSession {
  return { sessionId: "s1", cwd: "/ws", toolCalls: calls } as unknown as ChatSession;
}

const hunk = (index: number, newStart: number, newLines: number, status = "pending") => ({
  index,
  oldStart: newStart,
  oldLines: 1,
  newStart,
  newLines,
  status,
  oldText: "old\n",
});

describe("the hunks shown in the editor", () => {
  test("pending hunks by absolute path, from the latest call that changed each file", () => {
    const files = pendingHunks([
      session({
        c1: { toolCallId: "c1", review: { files: [{ path: "src/a.py", status: "pending", hunks: [hunk(0, 2, 1), hunk(1, 9, 2, "rejected")] }] } },
        c2: { toolCallId: "c2", review: { files: [{ path: "/ws/b.py", status: "pending", hunks: [hunk(0, 1, 1)] }] } },
        c3: { toolCallId: "c3", review: { files: [{ path: "/ws/b.py", status: "accepted", hunks: [hunk(0, 1, 1, "accepted")] }] } },
      }),
    ]);
    assert.deepEqual([...files.keys()], ["/ws/src/a.py"]);
    const a = files.get("/ws/src/a.py");
    assert.equal(a?.toolCallId, "c1");
    assert.equal(a?.path, "src/a.py");
    assert.deepEqual(a?.hunks.map((h) => h.index), [0]);
  });

  test("the lines a hunk occupies now, a deletion at the line after its gap", () => {
    assert.deepEqual(hunkLines(hunk(0, 3, 2), 10), [2, 3]);
    assert.deepEqual(hunkLines(hunk(0, 4, 0), 10), [4, 4]);
    assert.deepEqual(hunkLines(hunk(0, 0, 0), 10), [0, 0]);
    assert.deepEqual(hunkLines(hunk(0, 9, 5), 10), [8, 9]);
  });
});
