// Commands that add context to the next prompt of the chat last used: the attach menu (also on
// files and folders in the Explorer), diagnostics of the active file, and an image file. Kept
// apart from commands.ts so the chat's context features stay in one place.

import * as vscode from "vscode";
import type { PromptAttachments } from "./attachments";
import type { CurrentChat } from "./current";

export function registerAttachCommands(current: () => CurrentChat, output: vscode.LogOutputChannel): vscode.Disposable[] {
  const register = (id: string, fn: (a: PromptAttachments, ...args: unknown[]) => Promise<unknown>): vscode.Disposable =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        const chat = current();
        await chat.reveal();
        return await fn(chat.controller.attachments, ...args);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        output.error(`${id}: ${message}`);
        void vscode.window.showErrorMessage(`ACP: ${message}`);
        return undefined;
      }
    });
  return [
    // From the Explorer: the clicked (or all selected) files and folders; else the menu.
    register("acpLsp.addContext", async (a, uri?: unknown, selected?: unknown) => {
      const uris = Array.isArray(selected) ? selected : uri instanceof vscode.Uri ? [uri] : [];
      if (uris.length === 0) {
        return a.pick();
      }
      for (const u of uris) {
        if (u instanceof vscode.Uri) {
          await a.addPath(u);
        }
      }
      return undefined;
    }),
    register("acpLsp.addDiagnostics", async (a) => a.addDiagnostics()),
    register("acpLsp.attachImage", async (a, uri?: unknown) => a.addImageFile(uri instanceof vscode.Uri ? uri : undefined)),
  ];
}
