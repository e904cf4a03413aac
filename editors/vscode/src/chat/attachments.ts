// The chat's attachments on the extension-host side: files and folders (`@` or a picker),
// a file's diagnostics, a document symbol and images, kept until the next prompt is sent and
// shown as chips under the input. Images are refused, with the reason shown, when the agent
// the prompt goes to does not advertise promptCapabilities.image.

import * as vscode from "vscode";
import {
  addAttachment,
  chips,
  diagnosticsAttachment,
  IMAGE_TYPES,
  imageAttachment,
  imageMimeType,
  imageRefusal,
  pathAttachment,
  removeAttachment,
  symbolAttachment,
  type Attachment,
  type DiagnosticItem,
  type ImageInput,
} from "../model/attachments";
import { matchMentions, workspaceEntries, type MentionItem } from "../model/mentions";
import type { AttachmentMessage, HostToWebview } from "../model/messages";
import type { PromptCapabilities } from "../model/types";
import { documentSymbolChoices, pickWorkspaceSymbol, symbolRange, type SymbolChoice } from "./symbols";

/** The agent the next prompt goes to, and what it accepts (undefined: not known yet). */
export interface PromptTarget {
  agent: string;
  caps: PromptCapabilities | undefined;
}

const FILE_CACHE_MS = 5_000;
/** What the attach menu offers (the `@` list offers diagnostics, symbol and image too). */
type AttachKind = "path" | "diagnostics" | "symbol" | "workspaceSymbol" | "image";
const MAX_FILES = 5_000;
const SEVERITY: DiagnosticItem["severity"][] = ["error", "warning", "info", "hint"];

/**
 * files.exclude and search.exclude as one glob: findFiles applies only files.exclude by
 * itself, and node_modules would then fill the list. Patterns with braces cannot nest in it.
 */
function excludeGlob(): string | undefined {
  const patterns = ["files.exclude", "search.exclude"].flatMap((section) =>
    Object.entries(vscode.workspace.getConfiguration().get<Record<string, unknown>>(section) ?? {})
      .filter(([pattern, on]) => on === true && !/[{}]/.test(pattern))
      .map(([pattern]) => pattern),
  );
  return patterns.length > 0 ? `{${[...new Set(patterns)].join(",")}}` : undefined;
}

export class PromptAttachments implements vscode.Disposable {
  private list: Attachment[] = [];
  private files: { at: number; entries: MentionItem[]; uris: Map<string, vscode.Uri> } | undefined;
  private readonly refusedEmitter = new vscode.EventEmitter<string>();
  /** Fires with the reason shown whenever an attachment is refused (for tests). */
  readonly onDidRefuse = this.refusedEmitter.event;
  private readonly watcher = vscode.workspace.createFileSystemWatcher("**/*", false, true, false);

  constructor(
    private readonly post: (message: HostToWebview) => void,
    private readonly target: () => PromptTarget,
    private readonly editor: () => vscode.TextEditor | undefined,
  ) {
    // A new or deleted file is offered (or not) by the next `@` at once.
    const forget = (): void => {
      this.files = undefined;
    };
    this.watcher.onDidCreate(forget);
    this.watcher.onDidDelete(forget);
  }

  items(): readonly Attachment[] {
    return this.list;
  }

  publish(): void {
    this.post({ type: "attachments", items: chips(this.list) });
  }

  add(item: Attachment): void {
    this.list = addAttachment(this.list, item);
    this.publish();
  }

  remove(id: string): void {
    this.list = removeAttachment(this.list, id);
    this.publish();
  }

  /** Hand the list to a prompt being sent; `restore` puts it back when sending fails. */
  take(): { items: Attachment[]; restore(): void } {
    const items = this.list;
    this.list = [];
    if (items.length > 0) {
      this.publish();
    }
    return {
      items,
      restore: () => {
        this.list = [...items, ...this.list];
        this.publish();
      },
    };
  }

  /** Say why something was not attached: in the chat and as a warning, never silently. */
  refuse(reason: string): void {
    this.refusedEmitter.fire(reason);
    this.post({ type: "error", message: reason });
    void vscode.window.showWarningMessage(`ACP: ${reason}`);
  }

  async handle(message: AttachmentMessage): Promise<void> {
    switch (message.type) {
      case "mentionQuery":
        this.post({ type: "mentions", query: message.query, items: await this.mentions(message.query) });
        break;
      case "attach":
        await this.attachMention(message.item);
        break;
      case "attachMenu":
        await this.pick();
        break;
      case "pasteImage":
        this.addImage({ name: message.name, mimeType: message.mimeType, data: message.data });
        break;
      case "removeAttachment":
        this.remove(message.id);
        break;
    }
  }

  // -- files and folders --------------------------------------------------------------------

  private async workspaceFiles(): Promise<NonNullable<PromptAttachments["files"]>> {
    if (!this.files || Date.now() - this.files.at > FILE_CACHE_MS) {
      const found = await vscode.workspace.findFiles("**/*", excludeGlob(), MAX_FILES);
      const uris = new Map<string, vscode.Uri>();
      const labels = found.map((uri) => {
        const label = vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
        uris.set(label, uri);
        // Its folders: the file's uri with one `..` per level climbed.
        const parts = label.split("/");
        for (let up = 1; up < parts.length; up++) {
          const folder = `${parts.slice(0, parts.length - up).join("/")}/`;
          if (!uris.has(folder)) {
            uris.set(folder, vscode.Uri.joinPath(uri, ...Array<string>(up).fill("..")));
          }
        }
        return label;
      });
      const entries = workspaceEntries(labels);
      this.files = { at: Date.now(), entries, uris };
    }
    return this.files;
  }

  async mentions(query: string): Promise<MentionItem[]> {
    return matchMentions((await this.workspaceFiles()).entries, query);
  }

  async attachMention(item: MentionItem): Promise<void> {
    if (item.kind === "diagnostics" || item.kind === "symbol" || item.kind === "image") {
      await this.attachKind(item.kind);
      return;
    }
    const uri = (await this.workspaceFiles()).uris.get(item.label);
    if (!uri) {
      this.refuse(`cannot attach ${item.label}: not found in the workspace`);
      return;
    }
    this.add(pathAttachment(uri.toString(), item.label, item.kind === "folder"));
  }

  async addPath(uri: vscode.Uri): Promise<void> {
    let folder = false;
    try {
      folder = (await vscode.workspace.fs.stat(uri)).type === vscode.FileType.Directory;
    } catch {
      this.refuse(`cannot attach ${uri.fsPath}: no such file or folder`);
      return;
    }
    this.add(pathAttachment(uri.toString(), vscode.workspace.asRelativePath(uri, false), folder));
  }

  // -- diagnostics and symbols --------------------------------------------------------------

  private activeDocument(what: string): vscode.TextDocument | undefined {
    const document = this.editor()?.document;
    if (!document) {
      this.refuse(`cannot attach ${what}: open a file in an editor first`);
    }
    return document;
  }

  /** The current diagnostics of a file (the active editor's by default). */
  addDiagnostics(uri?: vscode.Uri): void {
    const target = uri ?? this.activeDocument("diagnostics")?.uri;
    if (!target) {
      return;
    }
    const label = vscode.workspace.asRelativePath(target, false);
    const items = vscode.languages.getDiagnostics(target).map(
      (d): DiagnosticItem => ({
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        severity: SEVERITY[d.severity] ?? "error",
        message: d.message,
        source: d.source,
        code: d.code === undefined ? undefined : String(typeof d.code === "object" ? d.code.value : d.code),
      }),
    );
    const attachment = diagnosticsAttachment(target.toString(), label, items);
    if (!attachment) {
      this.refuse(`no diagnostics in ${label}: nothing attached`);
      return;
    }
    this.add(attachment);
  }

  /** A symbol of the active file (a workspace symbol when no file is open); its text is sent. */
  async addSymbol(choose: (items: SymbolChoice[]) => Thenable<SymbolChoice | undefined> = (items) =>
    vscode.window.showQuickPick(items, { title: "Attach a symbol", matchOnDescription: true })): Promise<void> {
    const document = this.editor()?.document;
    if (!document) {
      await this.addWorkspaceSymbol();
      return;
    }
    const items = await documentSymbolChoices(document.uri);
    if (items.length === 0) {
      const label = vscode.workspace.asRelativePath(document.uri, false);
      this.refuse(`no symbols in ${label} (a language extension provides them): nothing attached`);
      return;
    }
    const picked = await choose(items);
    if (picked) {
      this.add(symbolAttachment(await symbolRange(document.uri, picked.symbol.name, picked.symbol.range)));
    }
  }

  /** A symbol found by workspace/symbol, in any file. */
  async addWorkspaceSymbol(choose: () => Thenable<vscode.SymbolInformation | undefined> = pickWorkspaceSymbol): Promise<void> {
    const picked = await choose();
    if (picked) {
      this.add(symbolAttachment(await symbolRange(picked.location.uri, picked.name, picked.location.range)));
    }
  }

  // -- images -------------------------------------------------------------------------------

  /** An image (pasted or read from a file) when the prompt's agent takes images. */
  addImage(image: ImageInput): boolean {
    const { agent, caps } = this.target();
    const result = imageAttachment(agent, caps, image);
    if ("refused" in result) {
      this.refuse(result.refused);
      return false;
    }
    this.add(result.attachment);
    return true;
  }

  async addImageFile(uri?: vscode.Uri): Promise<boolean> {
    const { agent, caps } = this.target();
    const refusal = imageRefusal(agent, caps);
    if (refusal) {
      // Say so before the user goes looking for a file.
      this.refuse(`cannot attach an image: ${refusal}`);
      return false;
    }
    const file =
      uri ??
      (
        await vscode.window.showOpenDialog({
          title: "Attach an image",
          canSelectMany: false,
          filters: { Images: Object.keys(IMAGE_TYPES) },
        })
      )?.[0];
    if (!file) {
      return false;
    }
    const name = file.path.split("/").pop() ?? file.path;
    let bytes: Uint8Array;
    try {
      bytes = await vscode.workspace.fs.readFile(file);
    } catch (error) {
      this.refuse(`cannot attach ${name}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    const mimeType = imageMimeType(name) ?? "";
    return this.addImage({ name, mimeType, data: Buffer.from(bytes).toString("base64"), uri: file.toString() });
  }

  // -- the attach menu ------------------------------------------------------------------------

  async pick(): Promise<void> {
    const choice = await vscode.window.showQuickPick<vscode.QuickPickItem & { id: AttachKind }>(
      [
        { label: "$(file) File or Folder…", id: "path" },
        { label: "$(warning) Diagnostics of the Active File", id: "diagnostics" },
        { label: "$(symbol-class) Symbol of the Active File…", id: "symbol" },
        { label: "$(symbol-namespace) Workspace Symbol…", id: "workspaceSymbol" },
        { label: "$(file-media) Image…", id: "image" },
      ],
      { title: "Add context to the prompt" },
    );
    if (choice) {
      await this.attachKind(choice.id);
    }
  }

  /** What the attach menu and the `@` actions (diagnostics, symbol, image) offer, asked for. */
  private async attachKind(kind: AttachKind): Promise<void> {
    switch (kind) {
      case "path": {
        const picked = await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: true });
        for (const uri of picked ?? []) {
          await this.addPath(uri);
        }
        break;
      }
      case "diagnostics":
        this.addDiagnostics();
        break;
      case "symbol":
        await this.addSymbol();
        break;
      case "workspaceSymbol":
        await this.addWorkspaceSymbol();
        break;
      case "image":
        await this.addImageFile();
        break;
    }
  }

  dispose(): void {
    this.watcher.dispose();
    this.refusedEmitter.dispose();
  }
}
