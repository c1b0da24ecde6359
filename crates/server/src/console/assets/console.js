// checkpointd console: small conveniences only; every page works without this script.
// "/" focuses the page's search field; a form marked data-confirm asks before it is sent;
// what a person types is kept as a draft (sessionStorage) until its form is sent; a form is
// sent only into a live session (else: sign in, come back, the draft is still there); activity
// keeps the session alive; a live page patches its main section around what the person is
// doing when its event stream reports a change.
"use strict";

const main = document.querySelector("main");
const signedIn = Boolean(document.querySelector('form[action="/sign-out"]'));

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

// ---- Drafts -------------------------------------------------------------------------------
// Every field a person types into is kept per tab (sessionStorage: gone with the tab, never
// sent anywhere) under the page's path and the field's id, until its form is sent. So neither
// a refresh, a reload, nor a detour through the sign-in page loses a half-typed comment.
const RETURN_TO = "checkpointd:return-to";
const draftable = (field) =>
  field instanceof HTMLTextAreaElement ||
  (field instanceof HTMLInputElement && ["text", "search", ""].includes(field.type) &&
    field.form && field.form.method === "post");
const draftKey = (field) => {
  const name = field.id || `${field.form?.getAttribute("action")}:${field.name}`;
  return `checkpointd:draft:${window.location.pathname}#${name}`;
};
const store = (() => {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
})();
const keepDraft = (field) => {
  if (!store || !draftable(field)) {
    return;
  }
  if (field.value) {
    store.setItem(draftKey(field), field.value);
  } else {
    store.removeItem(draftKey(field));
  }
};
const forgetDrafts = (form) => {
  for (const field of form.elements) {
    if (store && draftable(field)) {
      store.removeItem(draftKey(field));
    }
  }
};
const restoreDrafts = (root) => {
  if (!store) {
    return;
  }
  for (const field of root.querySelectorAll("textarea, input")) {
    const kept = draftable(field) ? store.getItem(draftKey(field)) : null;
    if (kept !== null && field.value === "") {
      field.value = kept;
    }
  }
};
document.addEventListener("input", (event) => keepDraft(event.target));

// ---- Session --------------------------------------------------------------------------------
// The server slides a session's expiry on each request a person makes (see session.rs). A
// person typing makes none, so activity pings GET /session now and then; the answer also says
// how long is left, so the page can warn before the end.
let pingEvery = 30_000;
let lastPing = 0;
let warnTimer = 0;
const notice = (text, link) => {
  let banner = document.getElementById("session-notice");
  if (!banner) {
    banner = document.createElement("p");
    banner.id = "session-notice";
    banner.className = "notice session-notice";
    banner.setAttribute("role", "status");
    if (main) {
      main.parentNode.insertBefore(banner, main);
    } else {
      document.body.prepend(banner);
    }
  }
  banner.textContent = `${text} `;
  if (link) {
    const anchor = document.createElement("a");
    anchor.href = "/sign-in";
    anchor.textContent = "Sign in again";
    anchor.addEventListener("click", rememberWhereWeWere);
    banner.append(anchor, " (your drafts are kept).");
  }
};
const clearNotice = () => document.getElementById("session-notice")?.remove();
function rememberWhereWeWere() {
  store?.setItem(RETURN_TO, window.location.pathname + window.location.search);
}
const ended = () => {
  rememberWhereWeWere();
  notice("Your session has ended.", true);
};
/** Asks the server how long the session has left (extending it); true when it is alive. */
const sessionAlive = async () => {
  lastPing = Date.now();
  let answer;
  try {
    answer = await fetch("/session", { credentials: "same-origin", cache: "no-store" });
  } catch {
    return null; // unreachable: say nothing, let the browser try the real request
  }
  if (answer.status === 401) {
    ended();
    return false;
  }
  if (!answer.ok) {
    return null;
  }
  const left = await answer.json();
  // Ping at least three times per idle period, so steady typing never lets it lapse.
  pingEvery = Math.max(1_000, Math.min(60_000, left.idle_ttl_ms / 3));
  clearTimeout(warnTimer);
  const warnBefore = Math.min(60_000, left.idle_ttl_ms / 4);
  warnTimer = setTimeout(
    () => notice("Your session ends soon: press any key or click to keep it.", false),
    Math.max(0, left.expires_in_ms - warnBefore),
  );
  clearNotice();
  return true;
};
if (signedIn) {
  const active = () => {
    if (Date.now() - lastPing >= pingEvery) {
      sessionAlive();
    }
  };
  for (const name of ["keydown", "pointerdown", "input"]) {
    document.addEventListener(name, active, { capture: true, passive: true });
  }
  // Back from the sign-in page: to where the person was, whose drafts then come back.
  const back = store?.getItem(RETURN_TO);
  store?.removeItem(RETURN_TO);
  // Only a path on this console (never "//host" or "/\\host", which browsers read as another
  // site), though only this origin's own pages can write the value.
  if (back && back.startsWith("/") && !back.startsWith("//") && !back.includes("\\") &&
      back !== window.location.pathname + window.location.search) {
    window.location.replace(back);
  }
}
if (main) {
  restoreDrafts(main);
}

// ---- Sending a form -------------------------------------------------------------------------
// A form that changes something is sent only after the session is known to be alive; when it
// has ended, the drafts stay, the page to come back to is remembered, and the person signs in.
document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (form.dataset.sessionChecked) {
    delete form.dataset.sessionChecked;
    forgetDrafts(form);
    return;
  }
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  const action = form.getAttribute("action") ?? "";
  if (!signedIn || form.method !== "post" || action === "/sign-out") {
    return;
  }
  event.preventDefault();
  for (const field of form.elements) {
    keepDraft(field);
  }
  const alive = await sessionAlive();
  if (alive === false) {
    window.location.assign("/sign-in");
    return;
  }
  form.dataset.sessionChecked = "1";
  delete form.dataset.confirm; // asked already
  form.requestSubmit(event.submitter ?? undefined);
});

// ---- Live updates ---------------------------------------------------------------------------
// Live pages (the inbox, a run) carry a hidden [data-live-url]: a Server-Sent Events stream
// that names each change. On one, the page is fetched again and its main section patched into
// the open one (morph, below): elements are matched by id, data-key, the form they send or the
// first thing in them that names a record, and changed in place. Never replaced or removed: a
// field with the focus or a typed value, and a control under the pointer or being pressed. A
// refresh waits while the pointer is pressed, so a click ends on the element it began on.

/** What names `node` among its siblings, or null for an anonymous one (matched by position). */
const keyOf = (node) => {
  if (node.nodeType !== Node.ELEMENT_NODE) {
    return null;
  }
  if (node.id) {
    return `#${node.id}`;
  }
  if (node.dataset.key) {
    return `k:${node.dataset.key}`;
  }
  const label = node.getAttribute("aria-labelledby");
  if (label) {
    return `l:${label}`;
  }
  if (node.tagName === "FORM") {
    return `f:${node.getAttribute("action")}`;
  }
  if (["LI", "TR", "ARTICLE", "SECTION", "DIV", "TBODY"].includes(node.tagName)) {
    const named = node.querySelector("[id], [data-key]");
    if (named) {
      return `${node.tagName}:${named.id || named.dataset.key}`;
    }
    const form = node.querySelector("form[action]");
    if (form) {
      return `${node.tagName}:f:${form.getAttribute("action")}`;
    }
    const link = node.querySelector("a[href]");
    if (link) {
      return `${node.tagName}:a:${link.getAttribute("href")}`;
    }
  }
  return null;
};

/** The keys of `parent`'s children, numbered when a key repeats (two forms to one action). */
const childKeys = (parent) => {
  const seen = new Map();
  return Array.from(parent.childNodes, (child) => {
    const key = keyOf(child);
    if (key === null) {
      return null;
    }
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    return `${key}~${count}`;
  });
};

/** Whether `node` holds what the person is using: the focus, the pointer, or their input. */
const inUse = (node, guarded) => {
  for (const held of guarded) {
    if (held && (node === held || node.contains(held))) {
      return true;
    }
  }
  if (node.nodeType === Node.ELEMENT_NODE) {
    for (const field of node.matches("textarea, input") ? [node] : node.querySelectorAll("textarea, input")) {
      if (draftable(field) && field.value !== field.defaultValue) {
        return true;
      }
    }
  }
  return false;
};

const syncAttributes = (old, fresh) => {
  for (const { name } of Array.from(old.attributes)) {
    if (!fresh.hasAttribute(name)) {
      old.removeAttribute(name);
    }
  }
  for (const { name, value } of Array.from(fresh.attributes)) {
    if (old.getAttribute(name) !== value) {
      old.setAttribute(name, value);
    }
  }
};

const morphNode = (old, fresh, guarded) => {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== fresh.nodeValue) {
      old.nodeValue = fresh.nodeValue;
    }
    return;
  }
  syncAttributes(old, fresh);
  if (old.tagName === "TEXTAREA") {
    // Its text is its default value; what the person typed is left as it is.
    if (old.value === old.defaultValue) {
      old.defaultValue = fresh.defaultValue;
    }
    return;
  }
  morphChildren(old, fresh, guarded);
};

function morphChildren(oldParent, freshParent, guarded) {
  const olds = Array.from(oldParent.childNodes);
  const oldKeys = childKeys(oldParent);
  const byKey = new Map();
  const anonymous = [];
  olds.forEach((node, index) => {
    if (oldKeys[index] === null) {
      anonymous.push(node);
    } else {
      byKey.set(oldKeys[index], node);
    }
  });
  const freshKeys = childKeys(freshParent);
  const kept = new Set();
  let nextAnonymous = 0;
  let place = oldParent.firstChild;
  Array.from(freshParent.childNodes).forEach((fresh, index) => {
    let match = null;
    if (freshKeys[index] !== null) {
      const candidate = byKey.get(freshKeys[index]);
      if (candidate && candidate.nodeName === fresh.nodeName) {
        match = candidate;
      }
    } else {
      for (let at = nextAnonymous; at < anonymous.length; at += 1) {
        if (anonymous[at].nodeName === fresh.nodeName) {
          match = anonymous[at];
          nextAnonymous = at + 1;
          break;
        }
      }
    }
    let node;
    if (match) {
      kept.add(match);
      morphNode(match, fresh, guarded);
      node = match;
    } else {
      node = document.importNode(fresh, true);
    }
    // Skip over old nodes still in use that the fresh page no longer has: they stay where
    // they are rather than being moved (moving a focused node drops its focus).
    while (place && place !== node && !kept.has(place) && inUse(place, guarded)) {
      kept.add(place);
      place = place.nextSibling;
    }
    if (node === place) {
      place = place.nextSibling;
    } else {
      oldParent.insertBefore(node, place);
    }
  });
  for (const old of olds) {
    if (!kept.has(old) && old.parentNode === oldParent && !inUse(old, guarded)) {
      old.remove();
    }
  }
}

/** Patches `fresh` (a parsed page's main) into the open `main`, keeping focus and selection. */
const patch = (fresh, guarded) => {
  const active = document.activeElement;
  const selection =
    active && typeof active.selectionStart === "number"
      ? [active.selectionStart, active.selectionEnd, active.selectionDirection]
      : null;
  morphChildren(main, fresh, guarded);
  if (active && active !== document.body && active.isConnected && document.activeElement !== active) {
    active.focus({ preventScroll: true });
    if (selection) {
      active.setSelectionRange(...selection);
    }
  }
  restoreDrafts(main);
};

const live = document.querySelector("[data-live-url]");
if (live && main && window.EventSource) {
  let stale = false;
  let fetching = false;
  // The control a press began on, until its click has been dispatched.
  let pressed = null;
  const count = (name) => {
    main.dataset[name] = String(Number(main.dataset[name] || 0) + 1);
  };
  const refresh = async () => {
    if (fetching || pressed) {
      stale = true;
      return;
    }
    fetching = true;
    stale = false;
    try {
      // Passive: a refresh shows the session is open, not that anyone is there.
      const answer = await fetch(window.location.href, {
        credentials: "same-origin",
        headers: { "x-console-passive": "1" },
      });
      if (answer.redirected || answer.status === 401) {
        ended();
        return;
      }
      if (answer.ok) {
        const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
        const freshMain = fresh.querySelector("main");
        if (freshMain && pressed) {
          stale = true; // a press began while the page was fetched: patch after its click
        } else if (freshMain) {
          const hovered = Array.from(main.querySelectorAll(":hover")).pop();
          patch(freshMain, [document.activeElement, hovered]);
          count("refreshed");
        }
      }
    } catch {
      stale = true;
    } finally {
      fetching = false;
      if (stale && !pressed) {
        setTimeout(refresh, 250);
      }
    }
  };
  let pressTimer = 0;
  main.addEventListener("pointerdown", (event) => {
    pressed = event.target;
    // A release outside the window may never be reported: refreshes wait 10 s at most.
    clearTimeout(pressTimer);
    pressTimer = setTimeout(released, 10_000);
  }, true);
  function released() {
    clearTimeout(pressTimer);
    // After the click this release causes has been dispatched to the same element.
    setTimeout(() => {
      pressed = null;
      if (stale) {
        refresh();
      }
    }, 0);
  }
  document.addEventListener("pointerup", released, true);
  document.addEventListener("pointercancel", released, true);
  const stream = new EventSource(live.dataset.liveUrl);
  const names = ["task.input_required", "task.approved", "task.rejected", "task.resumed",
    "task.dead", "checkpoint"];
  for (const name of names) {
    stream.addEventListener(name, () => {
      count("liveEvents");
      refresh();
    });
  }
  stream.addEventListener("signed-out", () => {
    stream.close();
    const typing = document.activeElement?.matches?.("input, textarea, select");
    const drafts = Array.from(main.querySelectorAll("textarea, input"))
      .some((field) => draftable(field) && field.value);
    if (typing || drafts) {
      ended(); // a banner, not a jump: the person is in the middle of something
    } else {
      rememberWhereWeWere();
      window.location.assign("/sign-in");
    }
  });
}
