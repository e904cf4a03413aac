// The composer's context UI: `@` completion of files, folders and the diagnostics / symbol /
// image actions, pasted images, the attach button, and the chips under the input with their
// ×. The list itself lives on the host (chat/attachments.ts); this only shows and asks.

import type { AttachmentChip } from "../model/attachments";
import { applyMention, mentionAt, type MentionItem } from "../model/mentions";
import type { AttachmentMessage } from "../model/messages";
import { ListPopup } from "./completion";
import { renderChips, renderMentionList } from "./renderAttachments";

export class AttachmentsView extends ListPopup<MentionItem> {
  private mention: { start: number; query: string } | undefined;

  constructor(
    private readonly input: HTMLTextAreaElement,
    popup: HTMLElement,
    private readonly chipList: HTMLElement,
    attachButton: HTMLElement,
    private readonly post: (message: AttachmentMessage) => void,
  ) {
    super(popup, renderMentionList);
    input.addEventListener("input", () => this.update());
    input.addEventListener("paste", (event) => this.paste(event));
    attachButton.addEventListener("click", () => this.post({ type: "attachMenu" }));
    popup.addEventListener("mousedown", (event) => {
      const row = (event.target as HTMLElement).closest<HTMLElement>("[data-mention]");
      if (row) {
        event.preventDefault(); // keep the focus in the input
        this.choose(Number(row.dataset.mention));
      }
    });
    chipList.addEventListener("click", (event) => {
      const button = (event.target as HTMLElement).closest<HTMLElement>("[data-remove]");
      if (button?.dataset.remove) {
        this.post({ type: "removeAttachment", id: button.dataset.remove });
      }
    });
  }

  /** Ask the host for matches of the `@query` at the caret (or close the list). */
  update(): void {
    this.mention = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (this.mention) {
      this.post({ type: "mentionQuery", query: this.mention.query });
    } else {
      this.close();
    }
  }

  /** The host's answer; a stale one (the query changed meanwhile) is dropped. */
  showMentions(query: string, items: MentionItem[]): void {
    if (this.mention?.query !== query) {
      return;
    }
    this.items = items;
    this.selected = 0;
    this.render();
  }

  showChips(items: AttachmentChip[]): void {
    this.chipList.innerHTML = renderChips(items);
    this.chipList.hidden = items.length === 0;
  }

  private choose(index: number): void {
    const item = this.items[index];
    const mention = this.mention;
    if (!item || !mention) {
      return;
    }
    const caret = this.input.selectionStart ?? this.input.value.length;
    const next = applyMention(this.input.value, mention.start, caret, item);
    this.input.value = next.text;
    this.input.setSelectionRange(next.caret, next.caret);
    this.mention = undefined;
    this.close();
    this.input.focus();
    this.post({ type: "attach", item });
  }

  chooseSelected(): void {
    this.choose(this.selected);
  }

  /** Pasted images go to the host, which attaches them or says why not. */
  private paste(event: ClipboardEvent): void {
    const files = [...(event.clipboardData?.items ?? [])]
      .filter((item) => item.kind === "file" && item.type.startsWith("image/"))
      .map((item) => item.getAsFile())
      .filter((file): file is File => file !== null);
    if (files.length === 0) {
      return;
    }
    event.preventDefault();
    for (const file of files) {
      const reader = new FileReader();
      reader.onload = () => {
        const url = String(reader.result);
        this.post({
          type: "pasteImage",
          name: file.name || `pasted.${file.type.split("/")[1] ?? "png"}`,
          mimeType: file.type,
          data: url.slice(url.indexOf(",") + 1),
        });
      };
      reader.readAsDataURL(file);
    }
  }
}
