import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { diagnosticsScope, insideFolders, worstFirst } from "../../model/worstDiagnostics";

describe("a diagnostics answer cut as the bridge asks", () => {
  test("the worst `limit`, errors first, kept in the editor's order", () => {
    // severities 4,3,2,1 repeating: 25 of each
    const items = Array.from({ length: 100 }, (_, i) => ({ i, severity: 4 - (i % 4) }));
    const kept = worstFirst(items, (d) => d.severity, 40);
    assert.equal(kept.length, 40);
    assert.equal(kept.filter((d) => d.severity === 1).length, 25, "every error");
    const warnings = kept.filter((d) => d.severity === 2).map((d) => d.i);
    assert.deepEqual(warnings, [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58], "the first warnings");
    assert.deepEqual(
      kept.map((d) => d.i),
      [...kept.map((d) => d.i)].sort((a, b) => a - b),
      "the editor's order",
    );
    assert.deepEqual(worstFirst(items, (d) => d.severity, undefined), items);
    assert.deepEqual(worstFirst(items.slice(0, 3), (d) => d.severity, 40), items.slice(0, 3));
  });

  test("inside the folders: the folder itself and what is below it, not a sibling by prefix", () => {
    assert.ok(insideFolders("/ws/a.py", ["/ws"]));
    assert.ok(insideFolders("/ws/a.py", ["/ws/"]));
    assert.ok(!insideFolders("/ws2/a.py", ["/ws"]));
    assert.ok(!insideFolders("/other/a.py", ["/ws", "/lib"]));
    assert.ok(insideFolders("/anywhere.py", undefined));
    assert.ok(!insideFolders("/ws/a.py", []));
  });

  test("limit and folders are read leniently", () => {
    assert.deepEqual(diagnosticsScope({ limit: 500, folders: ["/ws", 3] }), { limit: 500, folders: ["/ws"] });
    assert.deepEqual(diagnosticsScope({ limit: 0, folders: "/ws" }), { limit: undefined, folders: undefined });
    assert.deepEqual(diagnosticsScope({}), { limit: undefined, folders: undefined });
  });
});
