// checkpointd console: small conveniences only; every page works without this script.
// "/" focuses the page's search field; a form marked data-confirm asks before it is sent;
// a live page refreshes its main section when its event stream reports a change.
"use strict";
document.addEventListener("keydown", (event) => {
  const typing = event.target.closest("input, textarea, select");
  if (event.key === "/" && !typing) {
    const search = document.querySelector("input[type=search]");
    if (search) {
      event.preventDefault();
      search.focus();
    }
  }
});
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
// Live pages (the inbox, a run) carry a hidden [data-live-url]: a Server-Sent Events stream
// that names each change. On one, the page's main section is fetched again and swapped in,
// unless the person is typing in it: then the swap waits until focus leaves the field.
const live = document.querySelector("[data-live-url]");
if (live && window.EventSource) {
  const main = document.querySelector("main");
  let stale = false;
  let fetching = false;
  const typing = () => {
    const active = document.activeElement;
    return active && main.contains(active) && active.matches("input, textarea, select");
  };
  const refresh = async () => {
    if (typing()) {
      stale = true;
      return;
    }
    if (fetching) {
      stale = true;
      return;
    }
    fetching = true;
    stale = false;
    try {
      const answer = await fetch(window.location.href, { credentials: "same-origin" });
      if (answer.ok && !answer.redirected) {
        const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
        const freshMain = fresh.querySelector("main");
        if (freshMain) {
          main.innerHTML = freshMain.innerHTML;
          main.dataset.refreshed = String(Number(main.dataset.refreshed || 0) + 1);
        }
      }
    } finally {
      fetching = false;
      if (stale) {
        refresh();
      }
    }
  };
  main.addEventListener("focusout", () => {
    if (stale) {
      setTimeout(refresh, 0);
    }
  });
  const stream = new EventSource(live.dataset.liveUrl);
  const names = ["task.input_required", "task.approved", "task.rejected", "task.resumed",
    "task.dead", "checkpoint"];
  for (const name of names) {
    stream.addEventListener(name, refresh);
  }
  stream.addEventListener("signed-out", () => {
    stream.close();
    window.location.assign("/sign-in");
  });
}
