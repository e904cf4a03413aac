// acp/editorTool {sessionId, tool, arguments}: the editor's intelligence for agents (the bridge
// serves it to them as MCP tools). Answers are LSP shapes (docs/protocol.md "acp/editorTool"):
// VS Code positions are UTF-16, as LSP's default. Language questions go to whatever language
// extensions the user has, through VS Code's vscode.execute*Provider commands, never to acp-lsp.
// openDiff is in editorDiff.ts.

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { EditorDiffs } from "./editorDiff";
import type { EditorToolParams, EditorToolResult } from "./protocol";
import { diagnosticsScope, insideFolders, worstFirst } from "./model/worstDiagnostics";
import { ErrorCodes } from "./protocol";

const REQUEST_FAILED = -32803;

type Args = Record<string, unknown>;
type LspRange = { start: { line: number; character: number }; end: { line: number; character: number } };

const range = (r: vscode.Range): LspRange => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

function uriArg(args: Args): vscode.Uri {
  if (typeof args.uri !== "string") {
    throw new ResponseError(ErrorCodes.invalidParams, "a uri is needed");
  }
  return vscode.Uri.parse(args.uri);
}

function positionArg(args: Args): vscode.Position {
  const p = args.position as { line?: unknown; character?: unknown } | undefined;
  if (!p || typeof p.line !== "number" || typeof p.character !== "number") {
    throw new ResponseError(ErrorCodes.invalidParams, "a position is needed");
  }
  return new vscode.Position(p.line, p.character);
}

/** The document, opened (not shown) so that the language extensions for it see it. */
async function opened(uri: vscode.Uri): Promise<vscode.Uri> {
  try {
    await vscode.workspace.openTextDocument(uri);
  } catch (error) {
    throw new ResponseError(REQUEST_FAILED, `cannot open ${uri.fsPath}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return uri;
}

/** A file opened for its diagnostics waits for its linters: until one reports a problem, or
 * none has reported for QUIET_MS since the last report (several servers report, an empty list
 * first), at most FIRST_CHECK_MS (a file no linter checks): well inside the bridge's 10 s. */
const FIRST_CHECK_MS = 2000;
const QUIET_MS = 500;

async function checked(uri: vscode.Uri): Promise<void> {
  let done: () => void = () => undefined;
  const reported = new Promise<void>((resolve) => (done = resolve));
  let quiet: NodeJS.Timeout | undefined;
  const listener = vscode.languages.onDidChangeDiagnostics((event) => {
    if (!event.uris.some((u) => sameUri(u, uri))) {
      return;
    }
    if (vscode.languages.getDiagnostics(uri).length > 0) {
      done();
    }
    clearTimeout(quiet);
    quiet = setTimeout(done, QUIET_MS);
  });
  const timer = setTimeout(done, FIRST_CHECK_MS);
  try {
    await opened(uri);
    await reported;
  } finally {
    clearTimeout(timer);
    clearTimeout(quiet);
    listener.dispose();
  }
}

function diagnostic(uri: vscode.Uri, d: vscode.Diagnostic): Record<string, unknown> {
  const code = typeof d.code === "object" ? d.code.value : d.code;
  return {
    uri: uri.toString(),
    range: range(d.range),
    severity: d.severity + 1, // VS Code counts from Error = 0, LSP from Error = 1
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
    message: d.message,
  };
}

function location(item: vscode.Location | vscode.LocationLink): { uri: string; range: LspRange } {
  if ("targetUri" in item) {
    return { uri: item.targetUri.toString(), range: range(item.targetSelectionRange ?? item.targetRange) };
  }
  return { uri: item.uri.toString(), range: range(item.range) };
}

function markdown(content: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof content === "string") {
    return content;
  }
  if ("language" in content) {
    return `\`\`\`${content.language}\n${content.value}\n\`\`\``;
  }
  return content.value;
}

type DocumentSymbolLike = vscode.DocumentSymbol | vscode.SymbolInformation;

function documentSymbol(s: DocumentSymbolLike): Record<string, unknown> {
  // VS Code's SymbolKind counts from File = 0, LSP's from File = 1.
  if ("children" in s && "range" in s) {
    return {
      name: s.name,
      kind: s.kind + 1,
      range: range(s.range),
      selectionRange: range(s.selectionRange),
      ...(s.detail ? { detail: s.detail } : {}),
      children: s.children.map(documentSymbol),
    };
  }
  const info = s as vscode.SymbolInformation;
  return {
    name: info.name,
    kind: info.kind + 1,
    range: range(info.location.range),
    ...(info.containerName ? { containerName: info.containerName } : {}),
  };
}

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

export class EditorTools {
  constructor(
    private readonly diffs: EditorDiffs,
    /** The file editor the user last worked in, while still on screen (the chat may have focus). */
    private readonly lastEditor: () => vscode.TextEditor | undefined,
  ) {}

  async handle(params: EditorToolParams, token: vscode.CancellationToken): Promise<EditorToolResult> {
    const args: Args = params.arguments && typeof params.arguments === "object" ? params.arguments : {};
    switch (params.tool) {
      case "diagnostics":
        return await this.diagnostics(args);
      case "definition":
        return { locations: await this.locations("vscode.executeDefinitionProvider", args) };
      case "references":
        return { locations: await this.locations("vscode.executeReferenceProvider", args) };
      case "hover":
        return this.hover(args);
      case "documentSymbols": {
        const uri = await opened(uriArg(args));
        const found = await vscode.commands.executeCommand<DocumentSymbolLike[] | undefined>(
          "vscode.executeDocumentSymbolProvider",
          uri,
        );
        return { symbols: (found ?? []).map(documentSymbol) };
      }
      case "workspaceSymbols":
        return this.workspaceSymbols(args);
      case "openEditors":
        return this.openEditors();
      case "selection":
        return this.selection();
      case "openDiff":
        return this.diffs.open(args, token);
      default:
        throw new ResponseError(ErrorCodes.invalidParams, `unknown editor tool: ${String(params.tool)}`);
    }
  }

  /** {uri?}: what VS Code shows in its Problems view, for a file or every file. A file no
   * editor has open has not been checked: it is opened (not shown) and its linters get a moment
   * to report. */
  private async diagnostics(args: Args): Promise<EditorToolResult> {
    const { limit, folders } = diagnosticsScope(args);
    let found: [vscode.Uri, vscode.Diagnostic][];
    if (args.uri !== undefined) {
      const uri = uriArg(args);
      if (!vscode.workspace.textDocuments.some((d) => sameUri(d.uri, uri))) {
        await checked(uri);
      }
      found = vscode.languages.getDiagnostics(uri).map((d) => [uri, d]);
    } else {
      found = [];
      for (const [uri, list] of vscode.languages.getDiagnostics()) {
        // the bridge confines to the session's folders: untitled: and the like are never inside
        if (folders === undefined || (uri.scheme === "file" && insideFolders(uri.fsPath, folders))) {
          found.push(...list.map((d): [vscode.Uri, vscode.Diagnostic] => [uri, d]));
        }
      }
    }
    // cut before converting: the bridge reads a workspace's thousands in a fraction of the time
    const kept = worstFirst(found, ([, d]) => d.severity + 1, limit);
    return { diagnostics: kept.map(([uri, d]) => diagnostic(uri, d)), total: found.length };
  }

  private async locations(command: string, args: Args): Promise<{ uri: string; range: LspRange }[]> {
    const uri = await opened(uriArg(args));
    const found = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
      command,
      uri,
      positionArg(args),
    );
    const out = (found ?? []).map(location);
    const seen = new Set<string>();
    return out.filter((l) => {
      const key = JSON.stringify(l);
      return seen.has(key) ? false : (seen.add(key), true);
    });
  }

  private async hover(args: Args): Promise<EditorToolResult> {
    const uri = await opened(uriArg(args));
    const hovers = await vscode.commands.executeCommand<vscode.Hover[] | undefined>(
      "vscode.executeHoverProvider",
      uri,
      positionArg(args),
    );
    const parts = (hovers ?? []).flatMap((h) => h.contents.map(markdown)).filter((t) => t.trim() !== "");
    return { contents: parts.join("\n\n---\n\n") };
  }

  private async workspaceSymbols(args: Args): Promise<EditorToolResult> {
    if (typeof args.query !== "string") {
      throw new ResponseError(ErrorCodes.invalidParams, "a query is needed");
    }
    const found = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>(
      "vscode.executeWorkspaceSymbolProvider",
      args.query,
    );
    return {
      symbols: (found ?? []).map((s) => ({
        name: s.name,
        kind: s.kind + 1,
        location: { uri: s.location.uri.toString(), range: range(s.location.range) },
        ...(s.containerName ? { containerName: s.containerName } : {}),
      })),
    };
  }

  /** The text tabs of every tab group (a diff counts as its right side's file). */
  private openEditors(): EditorToolResult {
    const active = this.lastEditor()?.document.uri;
    const seen = new Set<string>();
    const editors: Record<string, unknown>[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        const uri =
          input instanceof vscode.TabInputText
            ? input.uri
            : input instanceof vscode.TabInputTextDiff
              ? input.modified
              : undefined;
        if (!uri || uri.scheme !== "file" || seen.has(uri.toString())) {
          continue;
        }
        seen.add(uri.toString());
        const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri, uri));
        editors.push({
          uri: uri.toString(),
          languageId: document?.languageId ?? "",
          dirty: tab.isDirty,
          active: active ? sameUri(active, uri) : tab.isActive && group.isActive,
        });
      }
    }
    return { editors };
  }

  /** The selection of the file editor the user works in; null when nothing is selected. */
  private selection(): EditorToolResult {
    const editor = this.lastEditor();
    if (!editor || editor.selection.isEmpty) {
      return { selection: null };
    }
    return {
      selection: {
        uri: editor.document.uri.toString(),
        range: range(editor.selection),
        text: editor.document.getText(editor.selection),
      },
    };
  }
}
