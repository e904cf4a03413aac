// End-to-end tests in real VS Code (code-server) with the real acp-lsp server and its demo
// agent. They drive the extension through the same paths the chat webview uses
// (ChatController.handle) and assert what a user would see: editors, documents, files on
// disk, the session's timeline, the status bar.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { diffItems, messageText, reviewState } from "../../model/queries";
import { sessionLabel } from "../../model/sessionList";
import * as protocol from "../../protocol";
import { assert, assertEqual, test, waitFor } from "./harness";
import {
  NOTE,
  api,
  writeFile,
  openEditor,
  closeAllEditors,
  answerPermissions,
  allow,
  answerPrompts,
  freshSession,
  current,
  lastToolCallOfKind,
  agentText,
  documentFor,
  pickByLabel,
  runAnswering,
  switcherItems,
} from "./helpers";

// -----------------------------------------------------------------------------------------------

test("the extension activates, starts the server and declares its capabilities", async () => {
  const a = await api();
  const client = await a.server.ready();
  const experimental = client.initializeResult?.capabilities.experimental as { acp?: { version?: number } } | undefined;
  assertEqual(experimental?.acp?.version, 1, "server's experimental.acp.version");
  const agents = await a.store.listAgents();
  assert(agents.some((agent) => agent.default), `a default agent is listed: ${JSON.stringify(agents)}`);
});

test("every command the extension contributes is registered, and the chat view's title bar names real ones", async () => {
  await api();
  const ext = vscode.extensions.getExtension("acp-lsp.acp-lsp");
  assert(ext, "the extension is installed");
  const contributes = ext.packageJSON.contributes as {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
  };
  const registered = new Set(await vscode.commands.getCommands(true));
  const contributed = contributes.commands.map((c) => c.command);
  assertEqual(contributed.filter((c) => !registered.has(c)), [], "contributed commands nobody registered");
  for (const id of ["acpLsp.switchSession", "acpLsp.renameSession", "acpLsp.closeSession", "acpLsp.deleteSession"]) {
    assert(contributed.includes(id), `${id} is in the command palette`);
  }
  const titleBar = (contributes.menus["view/title"] ?? []).map((m) => m.command);
  assertEqual(titleBar.filter((c) => !contributed.includes(c)), [], "title bar entries without a command");
  assert(titleBar.includes("acpLsp.switchSession") && titleBar.includes("acpLsp.deleteActiveSession"), `the chat's title bar: ${titleBar.join(", ")}`);
});

test("every acp/* request of protocol.ts is a method the server knows", async () => {
  const a = await api();
  const client = await a.server.ready();
  const unknown: string[] = [];
  for (const method of protocol.EDITOR_REQUESTS) {
    if (method === protocol.newSession.method || method === protocol.prompt.method) {
      continue; // these would start real work; covered by the tests below
    }
    try {
      await client.sendRequest(method, method === protocol.listAgents.method ? {} : { sessionId: "no-such-session" });
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === -32601) {
        unknown.push(method);
      }
    }
  }
  assertEqual(unknown, [], "methods the server answered 'method not found'");
});

test("a prompt streams thought, plan, text, tool calls, terminal and usage into the chat", async () => {
  const a = await api();
  const target = writeFile("stream/demo.py", "print('hello')\nprint('world')\n");
  await openEditor(target);
  const session = await freshSession(a);
  const answers = answerPermissions(a, allow);
  let updatesBeforeEnd = 0;
  const textSnapshots = new Set<string>();
  const sub = a.store.onDidChange((event) => {
    if (event.sessionId === session.sessionId && event.kind === "update") {
      updatesBeforeEnd++;
      textSnapshots.add(agentText(current(a, session.sessionId)));
    }
  });
  try {
    const result = await a.chat.sendPrompt("Please review this file");
    assertEqual(result?.stopReason, "end_turn", "stop reason");
  } finally {
    sub.dispose();
    answers.dispose();
  }
  const s = current(a, session.sessionId);
  assert(updatesBeforeEnd >= 5, `the turn arrived as a stream of notifications (${updatesBeforeEnd})`);
  assert(textSnapshots.size >= 3, `the answer grew chunk by chunk (${textSnapshots.size} distinct states)`);
  assert(s.messages.some((m) => m.role === "thought" && messageText(m).length > 0), "a thought was streamed");
  assert(s.messages.some((m) => m.role === "user"), "the prompt is in the timeline");
  assert(s.plan && s.plan.length >= 3, "a plan arrived");
  assert(s.plan.every((e) => e.status === "completed"), `the plan is complete: ${JSON.stringify(s.plan)}`);
  assert(/I added a review note/.test(agentText(s)), `the answer text: ${agentText(s)}`);
  assertEqual(lastToolCallOfKind(s, "read").status, "completed", "read tool call status");
  assert(lastToolCallOfKind(s, "read").locations.length > 0, "the read tool call has locations");
  assertEqual(lastToolCallOfKind(s, "edit").status, "completed", "edit tool call status");
  const run = lastToolCallOfKind(s, "execute");
  assertEqual(run.status, "completed", "execute tool call status");
  const terminalId = run.content.find((c) => c.type === "terminal")?.terminalId;
  assert(typeof terminalId === "string", "the execute tool call shows a terminal");
  await waitFor(() => s.terminals[terminalId]?.output.includes("demo.py"), "terminal output listing the files");
  assert(s.usage && typeof s.usage.used === "number" && s.usage.used > 0, `usage arrived: ${JSON.stringify(s.usage)}`);
  assertEqual(answers.seen.length, 1, "one permission prompt");
  assertEqual(s.status, "idle", "session status after the turn");
  assert(s.title, "the session got a title");
  assert(NOTE.test(fs.readFileSync(target, "utf8")), "the edit reached the file on disk");
});

test("slash commands and modes of the session are available to the chat", async () => {
  const a = await api();
  const session = await freshSession(a);
  const s = current(a, session.sessionId);
  await waitFor(() => s.commands.some((c) => c.name === "help"), "available commands");
  assert(s.modes?.availableModes.some((m) => m.id === "ask"), "modes of the session");
  await a.chat.handle({ type: "setMode", modeId: "ask" });
  await waitFor(() => current(a, session.sessionId).modes?.currentModeId === "ask", "mode switched to ask");
  await a.chat.handle({ type: "setConfigOption", configId: "verbosity", value: "concise" });
  await waitFor(
    () => current(a, session.sessionId).configOptions.find((o) => o.id === "verbosity")?.currentValue === "concise",
    "verbosity set to concise",
  );
  const answers = answerPermissions(a, allow);
  try {
    await closeAllEditors();
    const result = await a.chat.sendPrompt("/help");
    assertEqual(result?.stopReason, "end_turn", "stop reason of /help");
  } finally {
    answers.dispose();
  }
  assert(/\/explain/.test(agentText(current(a, session.sessionId))), "the /help answer lists the commands");
  assertEqual(answers.seen.length, 0, "no permission asked for /help");
});

test("a permission prompt shows the diff and its options; Reject with a reason leaves the file", async () => {
  const a = await api();
  const original = "alpha = 1\nbeta = 2\n";
  const target = writeFile("perm/reject.py", original);
  await openEditor(target);
  const session = await freshSession(a);
  const answers = answerPermissions(a, () => ({ optionId: "reject", reason: "not this file" }));
  try {
    const result = await a.chat.sendPrompt("Edit this file");
    assertEqual(result?.stopReason, "end_turn", "stop reason");
  } finally {
    answers.dispose();
  }
  const prompt = answers.seen[0];
  assert(prompt, "a permission prompt arrived through acp/requestPermission");
  assertEqual(
    prompt.options.map((o) => [o.name, o.kind]),
    [
      ["Allow", "allow_once"],
      ["Always allow", "allow_always"],
      ["Reject", "reject_once"],
    ],
    "the agent's options",
  );
  assertEqual(diffItems(prompt.toolCall)[0]?.path, target, "the prompt carries the diff of the file");
  assertEqual(a.permissions.list().length, 0, "no prompt left pending");
  const s = current(a, session.sessionId);
  assertEqual(lastToolCallOfKind(s, "edit").status, "failed", "the rejected edit's status");
  assertEqual((await documentFor(target)).getText(), original, "the document is unchanged");
  assertEqual(fs.readFileSync(target, "utf8"), original, "the file is unchanged");
});

test("an agent edit lands in an open editor with unsaved text: both survive, saved, undo works", async () => {
  const a = await api();
  const target = writeFile("edit/target.py", "first = 1\nsecond = 2\n");
  const editor = await openEditor(target);
  const userLine = "third = 3  # typed by the user, unsaved\n";
  await editor.edit((b) => b.insert(new vscode.Position(2, 0), userLine));
  assert(editor.document.isDirty, "the user's text is unsaved");
  await freshSession(a);
  const answers = answerPermissions(a, allow);
  try {
    const result = await a.chat.sendPrompt("Edit this file");
    assertEqual(result?.stopReason, "end_turn", "stop reason");
  } finally {
    answers.dispose();
  }
  const text = editor.document.getText();
  assert(NOTE.test(text), `the agent's note is in the editor:\n${text}`);
  assert(text.includes(userLine), `the user's unsaved line survived:\n${text}`);
  assert(text.startsWith("first = 1\n"), "the first line is kept");
  assertEqual(editor.document.isDirty, false, "acp/saveDocument saved the document");
  assertEqual(fs.readFileSync(target, "utf8"), text, "the disk matches the editor");
  // Undo takes back the agent's edit alone.
  await vscode.window.showTextDocument(editor.document);
  await vscode.commands.executeCommand("undo");
  const undone = editor.document.getText();
  assert(!NOTE.test(undone), `undo removed the agent's note:\n${undone}`);
  assert(undone.includes(userLine), "undo kept the user's line");
});

test("the prompt carries the active file and the selection as context", async () => {
  const a = await api();
  await closeAllEditors();
  const target = writeFile("context/sel.py", "a = 1\nb = 2\nc = 3\n");
  const editor = await openEditor(target);
  editor.selection = new vscode.Selection(1, 0, 2, 5);
  const session = await freshSession(a);
  assertEqual(a.chat.context(), { file: "context/sel.py", selection: "context/sel.py:2-3" }, "the context shown under the input");
  const result = await a.chat.sendPrompt("/explain");
  assertEqual(result?.stopReason, "end_turn", "stop reason");
  const user = current(a, session.sessionId).messages.find((m) => m.role === "user");
  assert(user, "the prompt is in the timeline");
  const blocks = user.content;
  // The timeline joins adjacent text blocks: the typed text, then the quoted selection.
  const text = String(blocks[0]?.text);
  assert(text.startsWith("/explain"), `the typed text comes first: ${JSON.stringify(blocks)}`);
  assert(
    text.includes("Selected in context/sel.py (lines 2-3)") && text.includes("b = 2\nc = 3"),
    `the selection is quoted: ${JSON.stringify(blocks)}`,
  );
  assert(
    blocks.some((b) => b.type === "resource_link" && b.uri === vscode.Uri.file(target).toString()),
    `the file is linked: ${JSON.stringify(blocks)}`,
  );
  assert(/You referenced `sel\.py`/.test(agentText(current(a, session.sessionId))), "the agent saw the file");
});

// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function userBlocks(a: Awaited<ReturnType<typeof api>>, sessionId: string): protocol.ContentBlock[] {
  const users = current(a, sessionId).messages.filter((m) => m.role === "user");
  const last = users[users.length - 1];
  assert(last, "the prompt is in the timeline");
  return last.content;
}

test("attached diagnostics, a folder (by @) and a symbol arrive at the agent", async () => {
  const a = await api();
  await closeAllEditors();
  const target = writeFile("ctx/diag.py", "import os\n\ndef greet(name):\n    return undefined_name\n");
  writeFile("ctx/pkg/mod.py", "x = 1\n");
  const uri = vscode.Uri.file(target);
  // What a language extension would report and provide.
  const diagnostics = vscode.languages.createDiagnosticCollection("acp-test");
  diagnostics.set(uri, [
    new vscode.Diagnostic(new vscode.Range(0, 7, 0, 9), "'os' imported but unused", vscode.DiagnosticSeverity.Warning),
    new vscode.Diagnostic(new vscode.Range(3, 11, 3, 25), "undefined name 'undefined_name'", vscode.DiagnosticSeverity.Error),
  ]);
  const symbols = vscode.languages.registerDocumentSymbolProvider({ pattern: "**/ctx/diag.py" }, {
    provideDocumentSymbols: () => [
      new vscode.DocumentSymbol("greet", "", vscode.SymbolKind.Function, new vscode.Range(2, 0, 3, 25), new vscode.Range(2, 4, 2, 9)),
    ],
  });
  try {
    await openEditor(target);
    const session = await freshSession(a);
    await a.chat.handle({ type: "attach", item: { kind: "diagnostics", label: "diagnostics" } });
    const folder = await waitFor(
      async () => (await a.chat.attachments.mentions("ctx/pk")).find((item) => item.kind === "folder"),
      "typing @ctx/pk to offer a folder",
    );
    assertEqual(folder.label, "ctx/pkg/", "the folder offered");
    await a.chat.handle({ type: "attach", item: folder });
    await a.chat.attachments.addSymbol(async (items) => items.find((i) => i.label === "greet"));
    assertEqual(
      a.chat.attachments.items().map((x) => x.label),
      ["diagnostics ctx/diag.py (2)", "ctx/pkg/", "symbol greet ctx/diag.py:3-4"],
      "the chips under the input",
    );
    const result = await a.chat.sendPrompt("/explain");
    assertEqual(result?.stopReason, "end_turn", "stop reason");
    const blocks = userBlocks(a, session.sessionId);
    assertEqual(
      blocks.filter((b) => b.type === "resource").map((b) => b.resource),
      [
        {
          uri: `${uri.toString()}#diagnostics`,
          text: "ctx/diag.py:1:8: warning: 'os' imported but unused\nctx/diag.py:4:12: error: undefined name 'undefined_name'",
          mimeType: "text/plain",
        },
        { uri: `${uri.toString()}#L3:4`, text: "def greet(name):\n    return undefined_name", mimeType: "text/x-python" },
      ],
      "the diagnostics and the symbol's text in the prompt",
    );
    assert(
      blocks.some((b) => b.type === "resource_link" && b.mimeType === "inode/directory" && String(b.uri).endsWith("/ctx/pkg")),
      `the folder is linked: ${JSON.stringify(blocks)}`,
    );
    const answer = agentText(current(a, session.sessionId));
    assert(answer.includes("You attached `diag.py#diagnostics` (2 lines)."), `the agent got the diagnostics: ${answer}`);
    assert(answer.includes("You attached `diag.py#L3:4` (2 lines)."), `the agent got the symbol: ${answer}`);
    assert(answer.includes("You referenced `pkg`."), `the agent got the folder: ${answer}`);
    assertEqual(a.chat.attachments.items().length, 0, "the chips are gone once the prompt is sent");
  } finally {
    diagnostics.dispose();
    symbols.dispose();
  }
});

test("a workspace symbol is attached with its whole body and reaches the agent", async () => {
  const a = await api();
  await closeAllEditors();
  const target = writeFile("wsym/shapes.py", "class Circle:\n    r = 1\n\n    def area(self):\n        return 3.14 * self.r ** 2\n");
  const uri = vscode.Uri.file(target);
  // A language extension's workspace symbols carry the name's range; its document symbols the body.
  const providers = [
    vscode.languages.registerWorkspaceSymbolProvider({
      provideWorkspaceSymbols: (query) =>
        "area".includes(query)
          ? [new vscode.SymbolInformation("area", vscode.SymbolKind.Method, "Circle", new vscode.Location(uri, new vscode.Range(3, 8, 3, 12)))]
          : [],
    }),
    vscode.languages.registerDocumentSymbolProvider({ pattern: "**/wsym/shapes.py" }, {
      provideDocumentSymbols: () => {
        const circle = new vscode.DocumentSymbol("Circle", "", vscode.SymbolKind.Class, new vscode.Range(0, 0, 4, 20), new vscode.Range(0, 6, 0, 12));
        circle.children = [
          new vscode.DocumentSymbol("area", "", vscode.SymbolKind.Method, new vscode.Range(3, 4, 4, 20), new vscode.Range(3, 8, 3, 12)),
        ];
        return [circle];
      },
    }),
  ];
  try {
    const session = await freshSession(a);
    await a.chat.attachments.addWorkspaceSymbol(async () => {
      const found = await vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", "area");
      return found.find((s) => s.name === "area");
    });
    assertEqual(a.chat.attachments.items().map((x) => x.label), ["symbol area wsym/shapes.py:4-5"], "the chip");
    await a.chat.sendPrompt("/explain");
    const resource = userBlocks(a, session.sessionId).find((b) => b.type === "resource")?.resource;
    assertEqual(
      resource,
      { uri: `${uri.toString()}#L4:5`, text: "    def area(self):\n        return 3.14 * self.r ** 2", mimeType: "text/x-python" },
      "the method's text in the prompt",
    );
    const answer = agentText(current(a, session.sessionId));
    assert(answer.includes("You attached `shapes.py#L4:5` (2 lines)."), `the agent got the symbol: ${answer}`);
  } finally {
    providers.forEach((p) => p.dispose());
  }
});

test("an image for an agent without image support is refused with the reason shown", async () => {
  const a = await api();
  await closeAllEditors();
  const session = await freshSession(a);
  const file = writeFile("ctx/shot.png", "");
  fs.writeFileSync(file, Buffer.from(PNG, "base64"));
  const refused: string[] = [];
  const sub = a.chat.attachments.onDidRefuse((reason) => refused.push(reason));
  try {
    await a.chat.handle({ type: "pasteImage", name: "image.png", mimeType: "image/png", data: PNG });
    assertEqual(await a.chat.attachments.addImageFile(vscode.Uri.file(file)), false, "the image file not attached");
  } finally {
    sub.dispose();
  }
  assertEqual(
    refused,
    [
      "cannot attach image.png: demo does not accept images (its promptCapabilities.image is not set)",
      "cannot attach an image: demo does not accept images (its promptCapabilities.image is not set)",
    ],
    "the reasons shown",
  );
  assertEqual(a.chat.attachments.items().length, 0, "no chip");
  await a.chat.sendPrompt("/explain");
  assert(!userBlocks(a, session.sessionId).some((b) => b.type === "image"), "no image in the prompt");
});

test("an image for an agent that advertises promptCapabilities.image is sent as an ACP image block", async () => {
  const a = await api();
  await closeAllEditors();
  const python = process.env.ACP_LSP_PYTHON;
  assert(python, "ACP_LSP_PYTHON is set");
  // The scripted test agent (tests/agents), advertising images and logging what it gets.
  const repo = path.resolve(__dirname, "../../../..");
  const log = path.join(os.tmpdir(), `acp-vision-${process.pid}-${Date.now()}.jsonl`);
  const script = {
    initialize: {
      protocolVersion: 1,
      agentInfo: { name: "vision", version: "1.0.0" },
      authMethods: [],
      agentCapabilities: { promptCapabilities: { image: true } },
    },
  };
  const agents = vscode.workspace.getConfiguration("acpLsp");
  await agents.update(
    "agents",
    {
      vision: {
        command: python,
        args: [path.join(repo, "tests/agents/scripted_acp.py"), "-c", JSON.stringify(script)],
        env: { SCRIPTED_ACP_LOG: log },
        title: "Vision (test)",
      },
    },
    vscode.ConfigurationTarget.Global,
  );
  try {
    await waitFor(async () => (await a.store.listAgents()).some((agent) => agent.name === "vision"), "the vision agent listed");
    await vscode.commands.executeCommand("acpLsp.openChat");
    const session = await a.chat.newSession("vision");
    assertEqual(current(a, session.sessionId).promptCapabilities?.image, true, "the session says it takes images");
    const file = writeFile("ctx/vision.png", "");
    fs.writeFileSync(file, Buffer.from(PNG, "base64"));
    assertEqual(await a.chat.attachments.addImageFile(vscode.Uri.file(file)), true, "the image attached");
    assertEqual(a.chat.attachments.items().map((x) => x.label), ["image vision.png"], "the chip");
    const result = await a.chat.sendPrompt("What is in this picture?");
    assertEqual(result?.stopReason, "end_turn", "stop reason");
    const prompts = fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { method?: string; params?: { prompt?: protocol.ContentBlock[] } })
      .filter((m) => m.method === "session/prompt");
    const image = prompts[0]?.params?.prompt?.find((b) => b.type === "image");
    assertEqual(
      image,
      { type: "image", mimeType: "image/png", data: PNG, uri: vscode.Uri.file(file).toString() },
      `the image block the agent got: ${JSON.stringify(prompts)}`,
    );
    // Attached for the vision session, then the chat moved to the demo agent: not sent, kept.
    assertEqual(await a.chat.attachments.addImageFile(vscode.Uri.file(file)), true, "the image attached again");
    await freshSession(a);
    const error = await a.chat.sendPrompt("And this one?").then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    assert(error?.includes("demo does not accept images"), `the prompt refused, saying why: ${error}`);
    assertEqual(a.chat.attachments.items().map((x) => x.label), ["image vision.png"], "the image chip is kept");
    const chip = a.chat.attachments.items()[0];
    await a.chat.handle({ type: "removeAttachment", id: chip?.id ?? "" });
  } finally {
    await agents.update("agents", undefined, vscode.ConfigurationTarget.Global);
  }
});

test("removing a chip removes it from the prompt", async () => {
  const a = await api();
  await closeAllEditors();
  writeFile("chips/keep.py", "keep = 1\n");
  writeFile("chips/drop.py", "drop = 1\n");
  writeFile("node_modules/dep/keep.py", "dep = 1\n");
  const session = await freshSession(a);
  for (const name of ["chips/keep.py", "chips/drop.py"]) {
    const item = await waitFor(
      async () => (await a.chat.attachments.mentions("chips/")).find((i) => i.label === name),
      `@chips/ to offer ${name}`,
    );
    await a.chat.handle({ type: "attach", item });
  }
  const offered = (await a.chat.attachments.mentions("keep")).map((i) => i.label);
  assert(!offered.some((l) => l.includes("node_modules")), `@ leaves out what search.exclude hides: ${JSON.stringify(offered)}`);
  const drop = a.chat.attachments.items().find((x) => x.label === "chips/drop.py");
  assert(drop, "the chip to remove");
  await a.chat.handle({ type: "removeAttachment", id: drop.id });
  assertEqual(a.chat.attachments.items().map((x) => x.label), ["chips/keep.py"], "the chips left");
  await a.chat.sendPrompt("/explain");
  const links = userBlocks(a, session.sessionId)
    .filter((b) => b.type === "resource_link")
    .map((b) => String(b.uri).split("/").pop());
  assertEqual(links, ["keep.py"], "the links in the prompt");
  const answer = agentText(current(a, session.sessionId));
  assert(answer.includes("You referenced `keep.py`.") && !answer.includes("drop.py"), `what the agent got: ${answer}`);
});

test("follow-along opens the file the agent works on at the line, and can be switched off", async () => {
  const a = await api();
  await closeAllEditors();
  const target = writeFile("follow/target.py", "one = 1\ntwo = 2\nthree = 3\n");
  const session = await freshSession(a);
  const answers = answerPermissions(a, allow);
  const jumps: { uri: string; line: number; shown: boolean }[] = [];
  const sub = a.server.onDidFollow((jump) => jumps.push(jump));
  // The prompt names its file: the active file as context would win with the demo agent, and a
  // jump of the test before (its turn's last, 200 ms after it) can open one after closeAllEditors.
  await a.chat.handle({ type: "includeContext", enabled: false });
  try {
    await a.chat.sendPrompt("Look at follow/target.py please");
    const editor = await waitFor(
      () => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === target),
      "an editor showing the file",
    );
    const edit = lastToolCallOfKind(current(a, session.sessionId), "edit");
    const line = (edit.locations[0]?.line ?? 1) - 1;
    const uri = vscode.Uri.file(target).toString();
    await waitFor(() => jumps.some((j) => j.uri === uri && j.line === line && j.shown), `a jump to line ${line + 1}: ${JSON.stringify(jumps)}`);
    // The jump comes when the agent announces the edit; the inserted line may push the cursor down one.
    const cursor = editor.selection.active.line;
    assert(cursor === line || cursor === line + 1, `the cursor at the edit (line ${cursor + 1}, expected ${line + 1})`);
    assert(editor.visibleRanges.some((r) => r.contains(new vscode.Position(line, 0))), "the edited line is in view");
    assert(vscode.window.activeTextEditor?.document.uri.fsPath === target, "the followed file is the active editor");

    await closeAllEditors();
    assertEqual(await a.chat.setFollow(false), false, "follow-along switched off");
    const other = writeFile("follow/other.py", "x = 1\n");
    await a.chat.sendPrompt("Look at follow/other.py please");
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the follow debounce
    assert(
      !vscode.window.visibleTextEditors.some((e) => e.document.uri.fsPath === other),
      "with follow-along off no editor was opened",
    );
    await a.chat.setFollow(true);
  } finally {
    const setting = vscode.workspace.getConfiguration("acpLsp").get<boolean>("chat.includeActiveFile", true);
    await a.chat.handle({ type: "includeContext", enabled: setting });
    sub.dispose();
    answers.dispose();
  }
});

test("cancel stops a slow turn at once and the session stays usable", async () => {
  const a = await api();
  await closeAllEditors();
  const session = await freshSession(a);
  const answers = answerPermissions(a, () => "leave");
  try {
    const turn = a.chat.sendPrompt("Go slow please");
    await waitFor(() => agentText(current(a, session.sessionId)).length > 0, "the slow answer to start");
    await a.chat.handle({ type: "cancel" });
    const result = await turn;
    assertEqual(result?.stopReason, "cancelled", "stop reason after cancel");
    const s = current(a, session.sessionId);
    await waitFor(() => s.status === "idle", "the session back to idle");
    const unfinished = Object.values(s.toolCalls).filter((c) => c.status === "pending" || c.status === "in_progress");
    assertEqual(unfinished.map((c) => c.toolCallId), [], "tool calls left unfinished");
    assertEqual(a.permissions.list(session.sessionId).length, 0, "no permission prompt left pending");
    const again = await a.chat.sendPrompt("/help");
    assertEqual(again?.stopReason, "end_turn", "the next prompt's stop reason");
  } finally {
    answers.dispose();
  }
});

test("the status bar shows the state, the running tool call and progress", async () => {
  const a = await api();
  await closeAllEditors();
  writeFile("status/s.py", "a = 1\n");
  const session = await freshSession(a);
  const texts = new Set<string>();
  const progress: string[] = [];
  const subs = [
    a.store.onDidChange(() => texts.add(a.statusBar.text)),
    a.store.onDidProgress((r) => {
      if (r.message || r.title) {
        progress.push(r.message ?? r.title ?? "");
      }
    }),
  ];
  const answers = answerPermissions(a, allow);
  try {
    await a.chat.sendPrompt("Check status/s.py");
  } finally {
    answers.dispose();
    subs.forEach((s) => s.dispose());
  }
  const all = [...texts];
  assert(all.some((t) => t.includes("working")), `the status bar said working: ${JSON.stringify(all)}`);
  assert(all.some((t) => t.includes("needs permission")), `… and that a permission was needed: ${JSON.stringify(all)}`);
  assert(all.some((t) => /Read |Edit |Count the lines/.test(t)), `… and named a tool call: ${JSON.stringify(all)}`);
  assert(progress.length > 0, "$/progress reports arrived for the turn");
  await waitFor(() => a.statusBar.text.includes("idle"), `the status bar back to idle (${a.statusBar.text})`);
  assert(a.statusBar.text.includes(current(a, session.sessionId).agent), "the status bar names the agent");
});

test("review: Undo restores a file, Keep keeps it, and the diff opens in the diff editor", async () => {
  const a = await api();
  const original = "keep = True\nvalue = 42\n";
  const target = writeFile("review/r.py", original);
  await openEditor(target);
  const session = await freshSession(a);
  const answers = answerPermissions(a, allow);
  try {
    await a.chat.sendPrompt("Edit this file");
    const edit = lastToolCallOfKind(current(a, session.sessionId), "edit");
    assert(NOTE.test((await documentFor(target)).getText()), "the edit landed");

    await a.chat.handle({ type: "openDiff", toolCallId: edit.toolCallId, index: 0 });
    await waitFor(() => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputTextDiff && input.original.scheme === "acp-lsp-diff";
    }, "a diff editor showing the agent's change");

    const undo = await a.chat.review("reject", edit.toolCallId);
    assert(undo.applied, `reject applied: ${JSON.stringify(undo)}`);
    await waitFor(async () => (await documentFor(target)).getText() === original, "the document restored");
    await waitFor(() => reviewState(current(a, session.sessionId).toolCalls[edit.toolCallId] as protocol.ToolCallState) !== "pending", "the tool call marked reviewed");

    await openEditor(target);
    await a.chat.sendPrompt("Edit this file");
    const keep = await a.chat.review("accept");
    assert(keep.applied, `accept applied: ${JSON.stringify(keep)}`);
    assert(NOTE.test((await documentFor(target)).getText()), "the kept edit stays");

    // One file of a tool call.
    const before = (await documentFor(target)).getText();
    await openEditor(target);
    await a.chat.sendPrompt("Edit this file");
    const third = lastToolCallOfKind(current(a, session.sessionId), "edit");
    assert((await documentFor(target)).getText() !== before, "the third edit landed");
    await a.chat.handle({ type: "review", action: "reject", toolCallId: third.toolCallId, path: target });
    await waitFor(async () => (await documentFor(target)).getText() === before, "the file's change undone");
  } finally {
    answers.dispose();
  }
});

test("sessions are listed and a live one loads into the chat", async () => {
  const a = await api();
  const session = await freshSession(a);
  await a.chat.sendPrompt("/help");
  const listed = (await a.store.listSessions()).sessions;
  const info = listed.find((s) => s.sessionId === session.sessionId);
  assert(info, `the session is listed: ${JSON.stringify(listed)}`);
  await freshSession(a);
  await a.chat.handle({ type: "loadSession", agent: info.agent, sessionId: info.sessionId, live: info.live });
  assertEqual(a.store.activeId, session.sessionId, "the loaded session is active");
  assert(/\/explain/.test(agentText(current(a, session.sessionId))), "its history is shown");
});

// -- several sessions side by side ---------------------------------------------------------------

test("Rename Session renames the active session: its title, the chat's title bar and acp/listSessions", async () => {
  const a = await api();
  await closeAllEditors();
  const session = await freshSession(a);
  await a.chat.sendPrompt("/explain the greeting");
  await waitFor(() => current(a, session.sessionId).title === "/explain the greeting", "the agent's title");
  const [asked] = await runAnswering(a, { input: async () => "Alpha notes" }, "acpLsp.renameSession");
  assert(asked?.kind === "input", `an input box was shown: ${JSON.stringify(asked)}`);
  assertEqual(asked.options.value, "/explain the greeting", "the input box starts with the old title");
  await waitFor(() => current(a, session.sessionId).title === "Alpha notes", "the session's new title");
  assertEqual(a.view.description, "Alpha notes", "the chat view's title bar names the session");
  const listed = (await a.store.listSessions()).sessions.find((s) => s.sessionId === session.sessionId);
  assertEqual(listed?.title, "Alpha notes", "acp/listSessions has the new title");
});

test("Switch Session lists the open sessions with agent and state; the picked one becomes the chat's", async () => {
  const a = await api();
  const first = await freshSession(a);
  await vscode.commands.executeCommand("acpLsp.renameSession", first.sessionId, "Switch me");
  await waitFor(() => current(a, first.sessionId).title === "Switch me", "the first session renamed");
  const second = await freshSession(a);
  const [asked] = await runAnswering(a, { pick: pickByLabel("Switch me") }, "acpLsp.switchSession");
  assert(asked?.kind === "pick", `a quick pick was shown: ${JSON.stringify(asked)}`);
  const items = asked.items.map((i) => [i.label, i.description]);
  assertEqual(items[0], [sessionLabel(current(a, second.sessionId)), "demo · idle · active"], "the active session leads");
  assertEqual(items[1], ["Switch me", "demo · idle"], "then the one used before it");
  assertEqual(a.store.activeId, first.sessionId, "the picked session is active");
  assertEqual(a.view.description, "Switch me", "the chat's title bar names it");
  assert(a.statusBar.text.includes("Switch me"), `the status bar names it: ${a.statusBar.text}`);

  // The real quick pick: the next item is the session used before, Enter switches to it. The
  // chat takes focus a moment after a switch, which would close a pick opened at once: retry.
  let picked: unknown;
  for (let attempt = 0; attempt < 3 && picked === undefined; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const switching = vscode.commands.executeCommand<string | undefined>("acpLsp.switchSession");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await vscode.commands.executeCommand("quickInput.next");
    await vscode.commands.executeCommand("quickInput.accept");
    picked = await Promise.race([switching, new Promise((resolve) => setTimeout(() => resolve("timeout"), 5000))]);
    if (picked === "timeout") {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    }
  }
  assertEqual(picked, second.sessionId, "the quick pick switched back");
  assertEqual(a.store.activeId, second.sessionId, "the second session is active again");
});

test("a session running in the background shows in the status bar, also while it awaits permission", async () => {
  const a = await api();
  const target = writeFile("background/b.py", "x = 1\n");
  await openEditor(target);
  const background = await freshSession(a);
  const answers = answerPermissions(a, () => "leave");
  const turn = a.chat.sendPrompt("Edit this file slowly").catch((error: unknown) => error);
  try {
    await waitFor(() => current(a, background.sessionId).status === "running", "the turn to start");
    const front = await freshSession(a);
    const label = (): string => sessionLabel(current(a, background.sessionId));
    await waitFor(() => a.statusBar.text.includes("1 more running"), `the status bar counts it (${a.statusBar.text})`);
    assert(a.statusBar.text.includes(sessionLabel(current(a, front.sessionId))), `… and names the active one: ${a.statusBar.text}`);
    await waitFor(() => a.statusBar.tooltip.includes(`• ${label()} (demo): `), `the tooltip lists it:\n${a.statusBar.tooltip}`);
    await waitFor(
      () => a.statusBar.text.includes("1 more running, 1 needs permission"),
      `the status bar shows it awaits permission (${a.statusBar.text})`,
      20_000,
    );
    assert(a.statusBar.tooltip.includes(`• ${label()} (demo): awaiting permission`), `the tooltip says so:\n${a.statusBar.tooltip}`);
    assert(a.permissions.list(background.sessionId).length === 1, "its permission prompt is pending in the chat");
    const item = (await switcherItems(a)).find((i) => i.label === label());
    assertEqual(item?.description, "demo · awaiting permission", "the switcher shows its state");
    // "Show it" on the prompt in the chat brings its session into the chat.
    await a.chat.handle({ type: "switchSession", sessionId: background.sessionId });
    assertEqual(a.store.activeId, background.sessionId, "the prompt's session is in the chat");
    assert(
      a.statusBar.text.includes(": needs permission") && !a.statusBar.text.includes("more running"),
      `the status bar now shows it as the active session: ${a.statusBar.text}`,
    );
    a.permissions.cancelSession(background.sessionId);
    await a.store.cancel(background.sessionId);
    const result = await turn;
    assertEqual((result as protocol.PromptResult | undefined)?.stopReason, "cancelled", "the background turn's end");
    await waitFor(() => !a.statusBar.text.includes("more running"), `the count goes away (${a.statusBar.text})`);
  } finally {
    answers.dispose();
  }
}, 60_000);

test("Close Session closes the active session: it leaves the open sessions, the chat moves to the previous one", async () => {
  const a = await api();
  const previous = await freshSession(a);
  const closing = await freshSession(a);
  await vscode.commands.executeCommand("acpLsp.closeSession");
  assert(!a.store.openSessions().some((s) => s.sessionId === closing.sessionId), "no longer among the open sessions");
  assertEqual(a.store.activeId, previous.sessionId, "the chat shows the session used before");
  const listed = (await a.store.listSessions()).sessions.find((s) => s.sessionId === closing.sessionId);
  assert(!listed?.live, `acp/listSessions no longer has it live: ${JSON.stringify(listed)}`);
  const items = await switcherItems(a);
  assert(!items.some((i) => i.label === sessionLabel(closing)), "the switcher does not offer it");
});

test("Delete Session asks first, then deletes the session and its stored history", async () => {
  const a = await api();
  await closeAllEditors();
  const session = await freshSession(a);
  await a.chat.sendPrompt("/explain the greeting");
  await vscode.commands.executeCommand("acpLsp.renameSession", session.sessionId, "Doomed notes");
  await waitFor(() => current(a, session.sessionId).title === "Doomed notes", "the session renamed");
  const stored = async (): Promise<protocol.SessionInfo | undefined> =>
    (await a.store.listSessions({ query: "Doomed notes" })).sessions.find((s) => s.sessionId === session.sessionId);
  await waitFor(stored, "the session in the history");

  const [asked] = await runAnswering(a, { confirm: async () => false }, "acpLsp.deleteSession");
  assert(asked?.kind === "confirm", `a modal confirmation was shown: ${JSON.stringify(asked)}`);
  assert(asked.message.includes("Doomed notes") && /history/.test(asked.detail), `it names the session and its history: ${JSON.stringify(asked)}`);
  assertEqual(a.store.activeId, session.sessionId, "declined: the session stays");
  assert(await stored(), "declined: the history stays");

  await runAnswering(a, { confirm: async () => true }, "acpLsp.deleteSession");
  assert(!a.store.openSessions().some((s) => s.sessionId === session.sessionId), "no longer among the open sessions");
  assert(a.store.activeId !== session.sessionId, "the chat moved on");
  assertEqual(await stored(), undefined, "a history search no longer finds it");
  const listed = (await a.store.listSessions()).sessions.filter((s) => s.sessionId === session.sessionId);
  assert(!listed.some((s) => s.stored || s.live), `acp/listSessions no longer has it stored or live: ${JSON.stringify(listed)}`);
});

test("after a server restart the old session is closed and the next prompt starts a new one", async () => {
  const a = await api();
  const old = await freshSession(a);
  const before = await a.server.ready();
  await vscode.commands.executeCommand("acpLsp.restartServer");
  const after = await a.server.ready();
  assert(after !== before, "a new language client runs");
  await waitFor(() => current(a, old.sessionId).status === "closed", "the old session marked closed");
  const result = await a.chat.sendPrompt("/help");
  assertEqual(result?.stopReason, "end_turn", "the prompt after the restart");
  assert(a.store.activeId !== old.sessionId, "the prompt went to a new session");
  assert(a.statusBar.text.includes("idle"), `the status bar shows the new session: ${a.statusBar.text}`);
});

test("Run Doctor asks which agent to start, runs acp-lsp doctor on it and reports the table", async () => {
  const a = await api();
  const prompts = answerPrompts(a, { pick: pickByLabel("Demo (built-in, offline)") });
  let result: { code: number | null; output: string; summary: string } | undefined;
  try {
    result = await vscode.commands.executeCommand("acpLsp.doctor");
  } finally {
    prompts.dispose();
  }
  const [asked] = prompts.asked;
  assert(asked?.kind === "pick", "an agent pick was shown");
  assertEqual(asked.items[0]?.label, "All configured agents", "all agents is offered first");
  assert(result, "the command ran doctor");
  assertEqual(result.code, 0, `doctor's exit code; output:\n${result.output}`);
  assert(/agent demo +ok +Demo \(built-in, offline\)[^\n]*session started/.test(result.output), result.output);
  assert(!/agent claude/.test(result.output), "only the picked agent was started");
  assertEqual(result.summary, "0 problem(s), 0 warning(s)", "the notification's summary");
});

test("Run Doctor checks an agent defined only in the acpLsp.agents setting", async () => {
  const a = await api();
  const python = process.env.ACP_LSP_PYTHON;
  assert(python, "ACP_LSP_PYTHON is set by the test runner");
  const settings = vscode.workspace.getConfiguration("acpLsp");
  await settings.update(
    "agents",
    { mine: { command: python, args: ["-m", "acp_lsp", "demo-agent"], env: { ACP_DEMO_DELAY: "0" }, title: "Mine (settings)" } },
    vscode.ConfigurationTarget.Global,
  );
  try {
    await waitFor(async () => (await a.store.listAgents()).some((agent) => agent.name === "mine"), "the agent listed");
    const prompts = answerPrompts(a, { pick: pickByLabel("Mine (settings)") });
    let result: { code: number | null; output: string } | undefined;
    try {
      result = await vscode.commands.executeCommand("acpLsp.doctor");
    } finally {
      prompts.dispose();
    }
    assert(result, "the command ran doctor");
    assertEqual(result.code, 0, `doctor's exit code; output:\n${result.output}`);
    assert(/editor settings +ok +stdin: read \(1 agents\)/.test(result.output), result.output);
    assert(/agent mine +ok [^\n]*session started/.test(result.output), result.output);
  } finally {
    await settings.update("agents", undefined, vscode.ConfigurationTarget.Global);
  }
});
