// acp/saveDocument: save the documents the agent edited, so the disk matches before the agent
// runs anything (DESIGN §3, Writes). A document is reported saved when, afterwards, it has
// no unsaved changes.

import * as vscode from "vscode";
import type * as protocol from "./protocol";

const SAVE_ATTEMPTS = 3;
const RETRY_DELAY_MS = 150;

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

/** Save one open document; a save that VS Code refused once (e.g. busy) is tried again. */
async function save(document: vscode.TextDocument): Promise<boolean> {
  for (let attempt = 1; attempt <= SAVE_ATTEMPTS; attempt++) {
    if (!document.isDirty) {
      return true;
    }
    if ((await document.save()) || !document.isDirty) {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * attempt));
  }
  return !document.isDirty;
}

export async function saveDocuments(
  params: protocol.SaveDocumentParams,
  log?: vscode.LogOutputChannel,
): Promise<protocol.SaveDocumentResult> {
  const saved: string[] = [];
  for (const raw of Array.isArray(params.uris) ? params.uris : []) {
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(raw, true);
    } catch {
      log?.warn(`acp/saveDocument: not a URI: ${raw}`);
      continue;
    }
    const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri, uri));
    if (!document) {
      // Not open: whatever is on disk is the document.
      try {
        await vscode.workspace.fs.stat(uri);
        saved.push(raw);
      } catch {
        log?.warn(`acp/saveDocument: ${raw} is neither open nor on disk`);
      }
      continue;
    }
    if (await save(document)) {
      saved.push(raw);
    } else {
      log?.warn(`acp/saveDocument: VS Code did not save ${raw}`);
    }
  }
  return { saved };
}
