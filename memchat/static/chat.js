// memchat chat page: sends turns, shows replies, and writes what each turn taught to long-term memory.
// Memory writes leave as soon as the reply arrives (keepalive fetches, all at once): a browser gives up on a
// closing page's pagehide when the page does not answer within about half a second, so a write held back for later
// is lost whenever the tab closes on a busy machine. What has not left yet when the page goes away (pagehide) goes
// with sendBeacon, which the browser delivers after the page is gone. Moving to another conversation or signing out
// awaits the writes, so that the next page's recall already sees them and the session still holds. (Some faults
// hold the writes back until the page leaves the conversation, the pending window their regressions need: held
// until an event, not for a time, so that how fast the machine is never decides whether the window is still open.)
(() => {
  "use strict";
  const cfg = window.MEMCHAT;
  const { request, showAlert, clearAlerts } = window.memchat;
  const log = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("message-input");
  const list = document.getElementById("conversations");
  let conversationId = cfg.conversationId;
  let pending = [];
  let chain = Promise.resolve();
  let writing = Promise.resolve(); // the memory writes under way
  let writesPaused = false; // fault writes-stall-after-error: a failed send pauses the writes, and nothing resumes them
  const outbox = []; // fault failed-send-resent: messages whose request failed on the network, sent again later
  const offline = []; // fault offline-send-kept-silently: messages sent offline, for a flush that never comes

  // Each fact waits as { text, turn, index }: the user's message that told it and its place in that turn's list.
  function queueMemories(texts, turn) {
    if (!texts.length) return;
    const facts = texts.map((text, index) => ({ text, turn, index }));
    if (cfg.writeQueue === "latest-only") pending = facts; // fault write-race: the newer turn replaces
    else pending.push(...facts);
    if (!cfg.holdWrites) flush("fetch");
  }

  // The pending writes as request bodies the server takes: one turn's facts each, at most cfg.writeBatch of them
  // (the fault many-facts-lost sends them all in one, which the server refuses above its limit). Each names its turn
  // and the place of its first fact, which date its memories: a beacon at pagehide may reach the server before the
  // fetch it follows.
  function takePending() {
    const size = cfg.writeBatch || pending.length || 1;
    const bodies = [];
    let i = 0;
    while (i < pending.length) {
      const { turn, index } = pending[i];
      const items = [];
      while (i < pending.length && pending[i].turn === turn && items.length < size) items.push(pending[i++].text);
      bodies.push(JSON.stringify({ conversation_id: conversationId, items, turn, first: index }));
    }
    pending = [];
    return bodies;
  }

  function showError(text) {
    showAlert(log, "send-error", text);
  }

  function flush(how) {
    if (writesPaused) return writing; // fault writes-stall-after-error: held in `pending`, never sent
    const bodies = takePending();
    if (how === "beacon") {
      for (const body of bodies) {
        navigator.sendBeacon("/api/memories", new Blob([body], { type: "application/json" }));
      }
      return Promise.resolve();
    }
    // All at once, each a keepalive fetch that outlives the page: the server dates a write by its turn and place,
    // not by its arrival, so none need wait for another; one that waited would never leave a page the browser cuts
    // off before its pagehide (a busy tab closed right after the reply lost the last 10 of 60 facts).
    const sent = bodies.map(async (body) => {
      try {
        const resp = await fetch("/api/memories", {
          method: "POST", headers: { "Content-Type": "application/json" }, body, keepalive: true,
        });
        if (!resp.ok) throw new Error((await resp.json().catch(() => ({}))).error || resp.statusText);
      } catch (err) {
        showError("Could not remember what you said: " + err.message); // never lost in silence
      }
    });
    writing = Promise.all([writing, ...sent]);
    return writing;
  }

  window.addEventListener(cfg.flushOn, () => { flush("beacon"); });

  function append(role, text, recalled) {
    const li = document.createElement("li");
    li.className = "message " + role;
    li.dataset.testid = "message";
    li.dataset.role = role;
    const span = document.createElement("span");
    span.className = "text";
    span.textContent = text;
    li.appendChild(span);
    if (recalled && recalled.length) {
      const ul = document.createElement("ul");
      ul.className = "recalled";
      ul.setAttribute("aria-label", "Recalled memories");
      for (const r of recalled) {
        const item = document.createElement("li");
        item.dataset.testid = "recalled-memory";
        item.dataset.memoryId = r.id;
        item.textContent = r.text;
        ul.appendChild(item);
      }
      li.appendChild(ul);
    }
    log.appendChild(li);
    li.scrollIntoView({ block: "end" });
  }

  function api(path, body) {
    return request("POST", path, body);
  }

  function conversationItem(conversation) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "/c/" + conversation.id;
    a.dataset.testid = "conversation-item";
    a.dataset.conversationId = conversation.id;
    a.setAttribute("aria-current", "page");
    a.textContent = conversation.title || "New conversation";
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.dataset.testid = "delete-conversation";
    remove.setAttribute("aria-label", "Delete conversation");
    remove.textContent = "Delete";
    const preview = document.createElement("p");
    preview.className = "preview";
    preview.dataset.testid = "conversation-preview";
    preview.textContent = conversation.preview || "";
    li.append(a, preview, remove);
    return li;
  }

  // The open conversation's entry previews its newest message, as the server's list will after a reload: the first
  // previewLength characters, never half of one.
  function showPreview(text) {
    const link = list.querySelector(`a[data-conversation-id="${CSS.escape(conversationId)}"]`);
    const preview = link && link.parentElement.querySelector('[data-testid="conversation-preview"]');
    if (preview) preview.textContent = Array.from(text).slice(0, cfg.previewLength).join("");
  }

  async function ensureConversation(firstText) {
    if (conversationId) return;
    // The title is the message's first 80 characters, never half of one (an emoji is two UTF-16 code units).
    const title = cfg.titleByCharacters ? Array.from(firstText).slice(0, 80).join("") : firstText.slice(0, 80);
    const { conversation } = await api("/api/conversations", { title });
    conversationId = conversation.id;
    history.replaceState(null, "", "/c/" + conversationId);
    list.prepend(conversationItem(conversation));
  }

  async function sendTurn(text) {
    const data = await api(`/api/conversations/${conversationId}/messages`, { text });
    append("assistant", data.reply.text, data.recalled);
    if (cfg.updatePreview) showPreview(data.reply.text);
    queueMemories(data.remember || [], data.message.id);
  }

  async function send(text) {
    append("user", text);
    if (cfg.keepOfflineSends && !navigator.onLine) {
      // The fault offline-send-kept-silently: kept "to be sent once back online", and nothing ever sends it.
      offline.push(text);
      return;
    }
    try {
      await ensureConversation(text);
      while (outbox.length) await sendTurn(outbox[0]).then(() => outbox.shift()); // fault failed-send-resent
      await sendTurn(text);
    } catch (err) {
      // A network error (fetch's TypeError) says nothing of whether the server stored the turn: the correct page
      // tells the user and sends nothing again on its own.
      if (cfg.resendFailedSends && err instanceof TypeError && !outbox.includes(text)) outbox.push(text);
      if (cfg.pauseWritesAfterError) writesPaused = true;
      showError("Could not send: " + err.message);
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if (cfg.keepInputUntilAnswered) {
      // The fault message-kept-until-answered: the message stays in its box until the answer comes (so that a
      // failed send is not lost), and Send stays enabled meanwhile: a second click sends it again.
      chain = chain.then(() => send(text)).then(() => { if (input.value.trim() === text) input.value = ""; });
      return;
    }
    input.value = "";
    chain = chain.then(() => send(text)); // turns keep their order even when typed faster than replies come
  });
  input.addEventListener("keydown", (event) => {
    // Enter while an input method composes (Chinese, Japanese) confirms the characters; it does not send.
    const composing = (event.isComposing || event.keyCode === 229) && !cfg.enterSendsWhileComposing;
    if (event.key === "Enter" && !event.shiftKey && !composing) { event.preventDefault(); form.requestSubmit(); }
  });

  async function leaveTo(url) {
    await chain;
    await flush("fetch");
    location.href = url;
  }
  document.getElementById("new-conversation").addEventListener("click", () => {
    if (cfg.newConversationAtOnce) location.href = "/"; // the fault new-conversation-at-once: nothing awaited
    else leaveTo("/");
  });
  // The memories page lists what this conversation taught once its writes have landed.
  document.querySelector('[data-testid="memories-link"]').addEventListener("click", (event) => {
    event.preventDefault();
    leaveTo(event.currentTarget.href);
  });
  // Signing out ends the session the pending writes need: they are sent first (a beacon after the logout would be
  // refused as anonymous).
  const logout = document.querySelector('[data-testid="logout"]')?.closest("form");
  if (logout && cfg.flushBeforeLogout) {
    logout.addEventListener("submit", async (event) => {
      event.preventDefault();
      await chain;
      await flush("fetch");
      logout.submit();
    });
  }
  // A conversation leaves the list once the server has deleted it; the open one is left for a new conversation. Its
  // turns' memory writes go first: the memories told in it outlive it.
  async function deleteConversation(button) {
    const item = button.closest("li");
    const id = item.querySelector("a").dataset.conversationId;
    const open = id === conversationId;
    button.disabled = true;
    clearAlerts("memories-error");
    if (open) {
      await chain;
      await flush("fetch");
    }
    try {
      await request("DELETE", "/api/conversations/" + encodeURIComponent(id));
    } catch (err) {
      button.disabled = false;
      showAlert(list, "memories-error", "Could not delete the conversation: " + err.message);
      return;
    }
    if (open) location.href = "/";
    else item.remove();
  }

  list.addEventListener("click", (event) => {
    const remove = event.target.closest('[data-testid="delete-conversation"]');
    if (remove && event.detail > 1) return; // a double click deletes one conversation, not the next one slid under it
    if (remove) {
      deleteConversation(remove);
      return;
    }
    const a = event.target.closest("a");
    if (!a) return;
    event.preventDefault();
    leaveTo(a.href);
  });
})();
