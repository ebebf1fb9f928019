// Small behaviours declared with data attributes, so the Content-Security-Policy can refuse
// every inline script: data-confirm="question" asks before a form submits; on a button,
// data-confirm-when="field=value" asks data-question when that field holds that value;
// data-autosubmit submits the form when the control changes;
// data-select-all="css selector" checks or unchecks every box the selector finds.
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
