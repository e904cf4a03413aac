// Whether the chat follows the end of the timeline: until the user scrolls up, and again once
// they scroll back to the end. Read from scrolling, not from the page's height at each frame:
// entries get their real height only once on screen (content-visibility), which would make the
// end look left behind.

function scroller(): Element {
  return document.scrollingElement ?? document.documentElement;
}

function nearBottom(): boolean {
  const el = scroller();
  return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
}

export class ScrollFollow {
  following = true;
  private lastTop = 0;

  constructor() {
    window.addEventListener(
      "scroll",
      () => {
        const top = scroller().scrollTop;
        if (top < this.lastTop || !this.following) {
          this.following = nearBottom();
        }
        this.lastTop = top;
      },
      { passive: true },
    );
  }
}
