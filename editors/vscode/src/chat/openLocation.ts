// A link in the chat: a web address opens in the browser; a file (absolute, `file:` or relative
// to the session's folder) opens in an editor at the line, as a preview.

import * as path from "node:path";
import * as vscode from "vscode";

export async function openLocation(target: string, line: number | null, cwd: string | undefined): Promise<void> {
  if (/^https?:/i.test(target)) {
    await vscode.env.openExternal(vscode.Uri.parse(target));
    return;
  }
  let uri: vscode.Uri;
  if (target.startsWith("file:")) {
    uri = vscode.Uri.parse(target);
  } else {
    const base = cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    uri = vscode.Uri.file(path.isAbsolute(target) ? target : path.join(base, target));
  }
  const options: vscode.TextDocumentShowOptions = { preview: true };
  if (line !== null && line > 0) {
    const position = new vscode.Position(line - 1, 0);
    options.selection = new vscode.Range(position, position);
  }
  await vscode.window.showTextDocument(uri, options);
}
