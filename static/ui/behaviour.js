// Small behaviours declared with data attributes, so the Content-Security-Policy can refuse
// every inline script: data-confirm="question" asks before a form submits; on a button,
// data-confirm-when="field=value" asks data-question when that field holds that value;
// data-autosubmit submits the form when the control changes;
// data-select-all="css selector" checks or unchecks every box the selector finds;
// data-copy="css selector" copies that element's text; data-nav-toggle opens the navigation.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !confirm(question)) event.preventDefault();
});
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm-when]");
  if (!button) return;
  const [field, value] = button.getAttribute("data-confirm-when").split("=");
  const question = button.getAttribute("data-question");
  if (button.form.elements[field].value === value && !confirm(question)) event.preventDefault();
});
document.addEventListener("change", (event) => {
  const selector = event.target.getAttribute("data-select-all");
  if (!selector) return;
  document.querySelectorAll(selector).forEach((box) => { box.checked = event.target.checked; });
});
document.addEventListener("change", (event) => {
  if (event.target.hasAttribute("data-autosubmit")) event.target.form.submit();
});
// The import page's upload bar: htmx reports the upload's progress on the form.
document.addEventListener("htmx:xhr:progress", (event) => {
  const bar = event.target.querySelector && event.target.querySelector("#upload-progress");
  if (!bar || !event.detail.lengthComputable) return;
  bar.hidden = false;
  bar.value = Math.round((100 * event.detail.loaded) / event.detail.total);
});
// When the upload is through, its bar goes: the import's own bar (or the refusal) takes its
// place, so the page never shows two bars, one of them stopped.
document.addEventListener("htmx:afterRequest", (event) => {
  const bar = event.target.querySelector && event.target.querySelector("#upload-progress");
  if (!bar) return;
  bar.hidden = true;
  bar.value = 0;
});
// The navigation's Menu button (narrow screens): opens and closes the panel it controls.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-nav-toggle]");
  if (!button) return;
  const open = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", String(open));
  document.getElementById(button.getAttribute("aria-controls")).classList.toggle("open", open);
});
// data-copy="css selector": a button that copies the text of the element the selector finds.
// Without the clipboard API (a page not served over https or from localhost) the text is
// selected instead, for the keyboard's copy.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  const source = button && document.querySelector(button.getAttribute("data-copy"));
  if (!source) return;
  const label = button.textContent;
  const done = (text) => {
    button.textContent = text;
    setTimeout(() => { button.textContent = label; }, 1500);
  };
  const select = () => {
    window.getSelection().selectAllChildren(source);
    done("Selected: press Ctrl+C");
  };
  if (!navigator.clipboard) return select();
  navigator.clipboard.writeText(source.textContent.trim()).then(() => done("Copied"), select);
});
