import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseDiskConflict } from "../../model/serverMessages";

describe("server messages", () => {
  test("the disk-conflict warning is recognised, with the file and lines", () => {
    const message =
      "acp-lsp: claude changed conflict.py on disk where you have unsaved edits (lines 5, 7-9); your buffer was kept. " +
      "Saving it overwrites the agent's change; acp/reviewEdit shows it";
    assert.deepEqual(parseDiskConflict(message), { file: "conflict.py", lines: "5, 7-9" });
  });

  test("other messages are not", () => {
    assert.equal(parseDiskConflict("acp-lsp: claude deleted a.py; its buffer still holds the text"), null);
    assert.equal(parseDiskConflict("something else"), null);
  });
});
