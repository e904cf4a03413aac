// What the user attached to the next prompt (files, folders, a file's diagnostics, a symbol,
// an image) as ACP content blocks, in the shapes the Neovim plugin sends too. Pure, so the
// list logic and the blocks are unit-tested; ../chat/attachments gathers them in VS Code.

import type { ContentBlock, PromptCapabilities } from "./types";

export type AttachmentKind = "file" | "folder" | "diagnostics" | "symbol" | "image";

export interface Attachment {
  id: string;
  kind: AttachmentKind;
  /** What the chip under the input shows; a second attachment with the same label replaces the first. */
  label: string;
  block: ContentBlock;
}

/** An attachment as the webview shows it (no block: an image's data stays on the host). */
export interface AttachmentChip {
  id: string;
  kind: AttachmentKind;
  label: string;
}

export const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};
/** Larger images are refused: agents' APIs cap them well below this. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

let counter = 0;
function nextId(): string {
  counter += 1;
  return `a${counter}`;
}

/** `list` with `item` appended, replacing one with the same label. */
export function addAttachment(list: readonly Attachment[], item: Attachment): Attachment[] {
  return [...list.filter((a) => a.label !== item.label), item];
}

export function removeAttachment(list: readonly Attachment[], id: string): Attachment[] {
  return list.filter((a) => a.id !== id);
}

export function chips(list: readonly Attachment[]): AttachmentChip[] {
  return list.map(({ id, kind, label }) => ({ id, kind, label }));
}

/** A file or folder as a resource_link: the agent reads it itself (every ACP agent takes these). */
export function pathAttachment(uri: string, label: string, folder: boolean): Attachment {
  const name = label.replace(/\/+$/, "").split("/").pop() || label;
  const block: ContentBlock = { type: "resource_link", uri, name };
  if (folder) {
    block.mimeType = "inode/directory";
  }
  return { id: nextId(), kind: folder ? "folder" : "file", label: folder ? `${label.replace(/\/+$/, "")}/` : label, block };
}

export interface DiagnosticItem {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  severity: "error" | "warning" | "info" | "hint";
  message: string;
  source?: string;
  code?: string;
}

/** One line per diagnostic, `path:line:col: severity: message [source code]`. */
export function formatDiagnostics(label: string, items: readonly DiagnosticItem[]): string {
  return items
    .map((d) => {
      const origin = [d.source, d.code].filter((x) => x !== undefined && x !== "").join(" ");
      return `${label}:${d.line}:${d.column}: ${d.severity}: ${d.message}${origin ? ` [${origin}]` : ""}`;
    })
    .join("\n");
}

/** A file's diagnostics as an embedded text resource (`<uri>#diagnostics`); undefined when none. */
export function diagnosticsAttachment(uri: string, label: string, items: readonly DiagnosticItem[]): Attachment | undefined {
  if (items.length === 0) {
    return undefined;
  }
  return {
    id: nextId(),
    kind: "diagnostics",
    label: `diagnostics ${label} (${items.length})`,
    block: {
      type: "resource",
      resource: { uri: `${uri}#diagnostics`, text: formatDiagnostics(label, items), mimeType: "text/plain" },
    },
  };
}

export interface SymbolRange {
  uri: string;
  /** Path shown to the user. */
  label: string;
  name: string;
  languageId: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
}

/** A symbol's text as an embedded resource whose uri carries the range (`#L<start>:<end>`). */
export function symbolAttachment(symbol: SymbolRange): Attachment {
  return {
    id: nextId(),
    kind: "symbol",
    label: `symbol ${symbol.name} ${symbol.label}:${symbol.startLine}-${symbol.endLine}`,
    block: {
      type: "resource",
      resource: {
        uri: `${symbol.uri}#L${symbol.startLine}:${symbol.endLine}`,
        text: symbol.text,
        mimeType: symbol.languageId ? `text/x-${symbol.languageId}` : "text/plain",
      },
    },
  };
}

/** Why `agent` cannot take images now, or undefined when it can. */
export function imageRefusal(agent: string, caps: PromptCapabilities | undefined): string | undefined {
  if (caps === undefined) {
    return `it is not known yet whether ${agent} accepts images: start a session with it first`;
  }
  if (caps.image !== true) {
    return `${agent} does not accept images (its promptCapabilities.image is not set)`;
  }
  return undefined;
}

/** The image type of a file name or mime type, or undefined when it is not one we send. */
export function imageMimeType(nameOrMime: string): string | undefined {
  const lower = nameOrMime.toLowerCase();
  if (Object.values(IMAGE_TYPES).includes(lower)) {
    return lower;
  }
  const ext = /\.([a-z0-9]+)$/.exec(lower)?.[1];
  return ext ? IMAGE_TYPES[ext] : undefined;
}

export interface ImageInput {
  name: string;
  mimeType: string;
  /** base64, without a `data:` prefix. */
  data: string;
  uri?: string;
}

/** An ACP image block, or the reason it is refused (agent, type, size). */
export function imageAttachment(
  agent: string,
  caps: PromptCapabilities | undefined,
  image: ImageInput,
): { attachment: Attachment } | { refused: string } {
  const refusal = imageRefusal(agent, caps);
  if (refusal) {
    return { refused: `cannot attach ${image.name}: ${refusal}` };
  }
  const mimeType = imageMimeType(image.mimeType) ?? imageMimeType(image.name);
  if (!mimeType) {
    return { refused: `cannot attach ${image.name}: not a PNG, JPEG, GIF or WebP image` };
  }
  if ((image.data.length * 3) / 4 > MAX_IMAGE_BYTES) {
    return { refused: `cannot attach ${image.name}: larger than 20 MB` };
  }
  const block: ContentBlock = { type: "image", mimeType, data: image.data };
  if (image.uri) {
    block.uri = image.uri;
  }
  return { attachment: { id: nextId(), kind: "image", label: `image ${image.name}`, block } };
}

/** Why these attachments cannot go to `agent` (images it does not take), or undefined. */
export function sendRefusal(agent: string, caps: PromptCapabilities | undefined, list: readonly Attachment[]): string | undefined {
  const images = list.filter((a) => a.kind === "image");
  if (images.length === 0) {
    return undefined;
  }
  const refusal = imageRefusal(agent, caps);
  return refusal ? `not sent: ${refusal}; remove ${images.map((a) => a.label).join(", ")} or start a session with an agent that takes images` : undefined;
}
