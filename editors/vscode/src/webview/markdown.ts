// A small, safe Markdown renderer for agent text: everything is escaped first, then a fixed
// set of constructs (fences, headings, lists, quotes, inline code, emphasis, links) is turned
// into HTML. No raw HTML from the agent ever reaches the page. An unclosed fence (a streaming
// answer) renders as code up to the end.

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const SAFE_URL = /^(https?:|file:|mailto:|#|\.{0,2}\/|[\w.-]+(\/|$))/i;

/** Inline constructs of one line of already-split text. */
export function renderInline(text: string): string {
  // Code spans first, so nothing inside them is touched by the other rules.
  const parts = text.split(/(`+[^`]*`+)/);
  return parts
    .map((part) => {
      const code = /^(`+)([^`]*)\1$/.exec(part);
      if (code) {
        return `<code>${escapeHtml(code[2] ?? "")}</code>`;
      }
      let html = escapeHtml(part);
      html = html.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => {
        // url is escaped already; check the scheme on the unescaped form.
        const raw = url.replace(/&amp;/g, "&");
        if (!SAFE_URL.test(raw) || /^javascript:/i.test(raw)) {
          return label;
        }
        return `<a href="${url}" data-link="${url}">${label}</a>`;
      });
      html = html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
      html = html.replace(/__([^_]+)__/g, "<strong>$1</strong>");
      html = html.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, "$1<em>$2</em>");
      html = html.replace(/(^|[^_\w])_([^_\s][^_]*)_(?!\w)/g, "$1<em>$2</em>");
      return html;
    })
    .join("");
}

type Block =
  | { kind: "code"; lang: string; lines: string[] }
  | { kind: "para"; lines: string[] }
  | { kind: "heading"; level: number; text: string }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "quote"; lines: string[] };

function parseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = /^\s*(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      const marker = fence[1] as string;
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trim().startsWith(marker)) {
        body.push(lines[i] as string);
        i++;
      }
      i++; // the closing fence (or past the end)
      blocks.push({ kind: "code", lang: fence[2] ?? "", lines: body });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push({ kind: "heading", level: (heading[1] as string).length, text: heading[2] ?? "" });
      i++;
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (bullet) {
      const ordered = /\d/.test(bullet[1] as string);
      const items: string[] = [];
      while (i < lines.length) {
        const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i] as string);
        if (!item || /\d/.test(item[1] as string) !== ordered) {
          break;
        }
        items.push(item[2] ?? "");
        i++;
      }
      blocks.push({ kind: "list", ordered, items });
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i] as string)) {
        quoted.push((lines[i] as string).replace(/^\s*>\s?/, ""));
        i++;
      }
      blocks.push({ kind: "quote", lines: quoted });
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      (lines[i] as string).trim() !== "" &&
      !/^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/.test(lines[i] as string)
    ) {
      para.push(lines[i] as string);
      i++;
    }
    if (para.length === 0) {
      // A line that looked like a block start but was not parsed as one: keep it as text.
      para.push(line);
      i++;
    }
    blocks.push({ kind: "para", lines: para });
  }
  return blocks;
}

/** A paragraph longer than this renders as pieces of about this size (see paragraphRawPieces). */
export const PIECE_CHARS = 16 * 1024;

// Inline HTML of the long paragraphs' pieces, by their text: a streaming answer re-renders
// its paragraph every frame, but only its last piece is new. Bounded; cleared when full.
const pieceCache = new Map<string, string>();
const PIECE_CACHE_MAX = 512;

/**
 * A very long paragraph as pieces of about PIECE_CHARS characters, cut after a space (a
 * piece ends at a line end of the paragraph, as if the text wrapped there). Each piece is its
 * own element, so a streaming answer lays out only its last piece and the browser skips the
 * pieces out of view. A cut depends only on the text before it: pieces already shown stay
 * the same as the paragraph grows.
 */
function paragraphRawPieces(lines: string[]): string[][] {
  const pieces: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    let rest = line;
    while (size + rest.length > PIECE_CHARS) {
      const cut = rest.indexOf(" ", Math.max(0, PIECE_CHARS - size));
      if (cut < 0) {
        break;
      }
      current.push(rest.slice(0, cut + 1));
      pieces.push(current);
      current = [];
      size = 0;
      rest = rest.slice(cut + 1);
    }
    current.push(rest);
    size += rest.length;
  }
  pieces.push(current);
  return pieces;
}

function cachedPiece(text: string, render: () => string): string {
  let html = pieceCache.get(text);
  if (html === undefined) {
    html = render();
    if (pieceCache.size >= PIECE_CACHE_MAX) {
      pieceCache.clear();
    }
    pieceCache.set(text, html);
  }
  return html;
}

function renderParagraph(lines: string[]): string[] {
  const total = lines.reduce((n, line) => n + line.length, 0);
  if (total <= PIECE_CHARS) {
    return [`<p>${lines.map(renderInline).join("<br>")}</p>`];
  }
  // Cut on the raw text (so pieces stay stable), render each piece once.
  const raw = paragraphRawPieces(lines);
  return raw.map((piece, i) => {
    const render = (): string => piece.map(renderInline).join("<br>");
    // The last piece is still growing: not worth keeping.
    const html = i < raw.length - 1 ? cachedPiece(piece.join("\n"), render) : render();
    return `<p class="piece${i === 0 ? " first" : ""}${i === raw.length - 1 ? " last" : ""}">${html}</p>`;
  });
}

/** The block HTML of `text`, one string per top-level element (what the chat diffs). */
export function renderMarkdownBlocks(text: string): string[] {
  return parseBlocks(text).flatMap((block) => {
    switch (block.kind) {
      case "code": {
        const lang = block.lang ? ` data-lang="${escapeHtml(block.lang)}"` : "";
        return [`<pre class="code"${lang}><code>${escapeHtml(block.lines.join("\n"))}</code></pre>`];
      }
      case "heading":
        return [`<h${block.level}>${renderInline(block.text)}</h${block.level}>`];
      case "list": {
        const tag = block.ordered ? "ol" : "ul";
        return [`<${tag}>${block.items.map((item) => `<li>${renderInline(item)}</li>`).join("")}</${tag}>`];
      }
      case "quote":
        return [`<blockquote>${renderInline(block.lines.join(" "))}</blockquote>`];
      case "para":
        return renderParagraph(block.lines);
    }
  });
}

export function renderMarkdown(text: string): string {
  return renderMarkdownBlocks(text).join("");
}
