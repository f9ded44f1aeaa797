// Shared by memchat's pages: JSON requests that fail with the server's one-line error, and alerts that say so.
window.memchat = (() => {
  "use strict";

  // The answer's JSON (null for 204 No Content); a refusal throws an Error carrying the server's message.
  async function request(method, path, body) {
    const init = { method };
    if (body !== undefined) {
      init.headers = { "Content-Type": "application/json" };
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    const data = resp.status === 204 ? null : await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error((data && data.error) || resp.statusText);
    return data;
  }

  function showAlert(anchor, testid, text) {
    const p = document.createElement("p");
    p.setAttribute("role", "alert");
    p.dataset.testid = testid;
    p.textContent = text;
    anchor.after(p);
  }

  function clearAlerts(testid) {
    for (const p of document.querySelectorAll(`[data-testid="${testid}"]`)) p.remove();
  }

  return { request, showAlert, clearAlerts };
})();
