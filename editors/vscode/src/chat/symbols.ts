// Symbols to attach, from the language extensions: the active file's document symbols, or a
// workspace symbol searched as the user types; and the full text of the one picked.

import * as vscode from "vscode";
import type { SymbolRange } from "../model/attachments";
import { searchPick } from "../searchPick";

export interface SymbolChoice extends vscode.QuickPickItem {
  symbol: vscode.DocumentSymbol;
}

type AnySymbol = vscode.DocumentSymbol | vscode.SymbolInformation;

// The command answers with objects that are both shapes when the provider gave DocumentSymbols
// (children included), and with bare SymbolInformation for flat providers.
function asDocumentSymbol(s: AnySymbol): vscode.DocumentSymbol {
  return "children" in s ? s : new vscode.DocumentSymbol(s.name, s.containerName, s.kind, s.location.range, s.location.range);
}

async function documentSymbols(uri: vscode.Uri): Promise<vscode.DocumentSymbol[]> {
  const found = await vscode.commands.executeCommand<AnySymbol[] | undefined>("vscode.executeDocumentSymbolProvider", uri);
  return (found ?? []).map(asDocumentSymbol);
}

/** Every symbol of a document, nested ones named with their container. */
export async function documentSymbolChoices(uri: vscode.Uri): Promise<SymbolChoice[]> {
  const items: SymbolChoice[] = [];
  const visit = (symbols: vscode.DocumentSymbol[], container: string): void => {
    for (const symbol of symbols) {
      items.push({ label: symbol.name, description: [vscode.SymbolKind[symbol.kind], container].filter(Boolean).join(" in "), symbol });
      visit(symbol.children ?? [], symbol.name);
    }
  };
  visit(await documentSymbols(uri), "");
  return items;
}

/** A quick pick over workspace/symbol, queried as the user types. */
export async function pickWorkspaceSymbol(): Promise<vscode.SymbolInformation | undefined> {
  const picked = await searchPick({
    title: "Attach a workspace symbol",
    placeholder: "Type a symbol's name",
    debounceMs: 0,
    searchOnShow: false,
    search: async (value) => {
      const found = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>("vscode.executeWorkspaceSymbolProvider", value);
      return (found ?? []).slice(0, 200).map((symbol) => ({
        label: symbol.name,
        description: `${vscode.SymbolKind[symbol.kind]} · ${vscode.workspace.asRelativePath(symbol.location.uri, false)}`,
        symbol,
      }));
    },
  });
  return picked?.symbol;
}

function innermost(symbols: vscode.DocumentSymbol[], name: string, at: vscode.Position): vscode.DocumentSymbol | undefined {
  for (const symbol of symbols) {
    if (symbol.range.contains(at)) {
      return innermost(symbol.children ?? [], name, at) ?? (symbol.name === name ? symbol : undefined);
    }
  }
  return undefined;
}

/**
 * The symbol's whole lines. Workspace symbols often carry only the name's range: the
 * document symbol of that name around it gives the body.
 */
export async function symbolRange(uri: vscode.Uri, name: string, range: vscode.Range): Promise<SymbolRange> {
  const document = await vscode.workspace.openTextDocument(uri);
  let full = range;
  if (range.isSingleLine) {
    full = innermost(await documentSymbols(uri), name, range.start)?.range ?? range;
  }
  const end = Math.min(full.end.line, document.lineCount - 1);
  return {
    uri: uri.toString(),
    label: vscode.workspace.asRelativePath(uri, false),
    name,
    languageId: document.languageId,
    startLine: full.start.line + 1,
    endLine: end + 1,
    text: document.getText(new vscode.Range(full.start.line, 0, end, document.lineAt(end).text.length)),
  };
}
