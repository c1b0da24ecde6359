// checkpointd console: small conveniences only; every page works without this script.
// "/" focuses the page's search field; a form marked data-confirm asks before it is sent.
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
