// memchat memories page: edit, delete or clear what the app remembers, and turn memory on or off. Every change is
// shown once the server has answered it; a refusal is an alert and changes nothing shown, so that the page never shows
// what the server does not hold (a reload shows the same).
(() => {
  "use strict";
  const cfg = window.MEMCHAT;
  const { request, showAlert, clearAlerts } = window.memchat;
  const heading = document.querySelector("h1");
  const list = document.getElementById("memory-list");
  const toggle = document.getElementById("memory-enabled");
  const status = document.getElementById("memory-status");
  const clearAll = document.getElementById("clear-memories");
  const confirmClear = document.getElementById("confirm-clear-memories");
  const cancelClear = document.getElementById("cancel-clear-memories");
  const shown = new WeakMap(); // an item being edited -> what it showed before (its text, Edit and Delete)

  function fail(what, err) {
    showAlert(heading, "memories-error", `Could not ${what}: ${err.message}`);
  }

  function memoryPath(item) {
    return "/api/memories/" + encodeURIComponent(item.dataset.memoryId);
  }

  function showEmptyState() {
    if (list.children.length || document.querySelector('[data-testid="no-memories"]')) return;
    const p = document.createElement("p");
    p.dataset.testid = "no-memories";
    p.textContent = "You have no memories.";
    list.after(p);
  }

  // The item's controls wait while its change is on its way.
  async function settle(item, change) {
    clearAlerts("memories-error");
    const controls = item.querySelectorAll("button, textarea");
    for (const c of controls) c.disabled = true;
    try {
      await change();
    } finally {
      for (const c of controls) c.disabled = false;
    }
  }

  function button(text, testid) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.testid = testid;
    b.textContent = text;
    return b;
  }

  // The text becomes a textbox with Save and Cancel, which take the place of Edit and Delete until the edit ends.
  function startEdit(item) {
    const input = document.createElement("textarea");
    input.dataset.testid = "memory-edit-input";
    input.setAttribute("aria-label", "Memory");
    input.rows = 2;
    input.value = item.querySelector('[data-testid="memory-text"]').textContent;
    shown.set(item, [...item.children]);
    item.replaceChildren(input, button("Save", "save-memory"), button("Cancel", "cancel-edit"));
    input.focus();
  }

  function endEdit(item) {
    item.replaceChildren(...shown.get(item));
    shown.delete(item);
  }

  async function save(item) {
    const text = item.querySelector('[data-testid="memory-edit-input"]').value.trim();
    let saved = null;
    try {
      saved = (await request("PUT", memoryPath(item), { text })).memory;
    } catch (err) {
      fail("save the memory", err); // the memory reads as before
    }
    endEdit(item);
    if (saved) item.querySelector('[data-testid="memory-text"]').textContent = saved.text;
  }

  async function remove(item) {
    if (cfg.deleteOptimistically) {
      // The fault deleted-memory-returns: the item goes at once; the request names the memory by a key the item
      // does not have, and its refusal is ignored.
      item.remove();
      showEmptyState();
      fetch("/api/memories/" + item.dataset.id, { method: "DELETE" }).catch(() => {});
      return;
    }
    try {
      await request("DELETE", memoryPath(item));
    } catch (err) {
      fail("delete the memory", err);
      return;
    }
    item.remove();
    showEmptyState();
  }

  list.addEventListener("click", (event) => {
    // The second click of a double click is not a click on whatever took the first one's place (the next item slides
    // under the pointer once the first is deleted).
    if (event.detail > 1) return;
    const b = event.target.closest("button");
    if (!b) return;
    const item = b.closest('[data-testid="memory-item"]');
    const actions = {
      "edit-memory": () => startEdit(item),
      "cancel-edit": () => endEdit(item),
      "save-memory": () => settle(item, () => save(item)),
      "delete-memory": () => settle(item, () => remove(item)),
    };
    actions[b.dataset.testid]?.();
  });

  function showStatus(on) {
    status.textContent = on ? status.dataset.on : status.dataset.off;
  }

  toggle.addEventListener("change", async () => {
    const wanted = toggle.checked;
    clearAlerts("memories-error");
    if (!cfg.saveMemorySetting) {
      showStatus(wanted); // the fault memory-setting-not-saved: the page alone changes; nothing is sent
      return;
    }
    toggle.disabled = true;
    try {
      const { settings } = await request("PUT", "/api/settings", { memory: wanted });
      toggle.checked = settings.memory;
      showStatus(settings.memory);
    } catch (err) {
      toggle.checked = !wanted;
      fail("save the setting", err);
    } finally {
      toggle.disabled = false;
    }
  });

  function askToClear(asking) {
    confirmClear.hidden = !asking;
    cancelClear.hidden = !asking;
    if (asking) confirmClear.focus();
  }

  clearAll.addEventListener("click", () => askToClear(true));
  cancelClear.addEventListener("click", () => askToClear(false));
  confirmClear.addEventListener("click", async () => {
    clearAlerts("memories-error");
    confirmClear.disabled = true;
    try {
      await request("DELETE", "/api/memories");
      list.replaceChildren();
      showEmptyState();
    } catch (err) {
      fail("clear your memories", err);
    } finally {
      confirmClear.disabled = false;
      askToClear(false);
    }
  });
})();
