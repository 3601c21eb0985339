// Operator entry: keypad (mouse, touch, keyboard or numeric keypad) or cards.
// Every action is one POST with the session's CSRF token; the server answers with the
// table's new state, which is redrawn from scratch.
(function () {
  "use strict";
  const root = document.getElementById("operator");
  if (!root) return;
  const table = root.dataset.table, csrf = root.dataset.csrf;
  const entry = { outcome: null, player_pair: false, banker_pair: false, natural: false };
  const $ = (id) => document.getElementById(id);
  let state = null;

  function say(text, error) {
    const box = $("message");
    box.textContent = text;
    box.className = error ? "error" : "ok";
  }

  async function post(body) {
    const response = await fetch(`/operator/${encodeURIComponent(table)}/action`, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      say(data.detail ? String(data.detail) : `error ${response.status}`, true);
      if (response.status === 401) location.href = `/login?next=${location.pathname}`;
      return null;
    }
    if (data.table_id) render(data);
    if (data.ok === false) { say(data.detail, true); return null; }
    if (data.message) say(data.message, false);
    return data;
  }

  function showEntry() {
    const names = { B: "Banker", P: "Player", T: "Tie" };
    const flags = ["player_pair", "banker_pair", "natural"].filter((k) => entry[k])
      .map((k) => k.replace("_", " "));
    $("entry").textContent = entry.outcome ? [names[entry.outcome], ...flags].join(" + ") : "—";
    document.querySelectorAll("[data-outcome]").forEach(
      (b) => b.classList.toggle("on", b.dataset.outcome === entry.outcome));
    document.querySelectorAll("[data-toggle]").forEach(
      (b) => b.setAttribute("aria-pressed", String(entry[b.dataset.toggle])));
  }

  function clear() {
    entry.outcome = null; entry.player_pair = entry.banker_pair = entry.natural = false;
    showEntry();
  }

  function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

  function render(data) {
    state = data;
    $("op-status").textContent = data.state === "open"
      ? `Shoe ${data.shoe_id} — ${data.coups} coups` : `No open shoe (${data.state})`;
    const last = $("last");
    last.replaceChildren();
    for (const c of data.last) {
      const tr = document.createElement("tr");
      const cards = c.player_cards ? `${c.player_cards.join(" ")} | ${c.banker_cards.join(" ")}` : "";
      const flags = ["player_pair", "banker_pair", "natural"].filter((k) => c[k]).join(", ");
      tr.append(cell(`#${c.coup}`), cell(c.outcome), cell(cards), cell(flags));
      const td = document.createElement("td");
      const fix = document.createElement("button");
      fix.textContent = "Request correction";
      fix.dataset.coup = c.coup;
      fix.className = "request-correction";
      td.append(fix); tr.append(td); last.append(tr);
    }
    const pending = $("pending");
    pending.replaceChildren();
    for (const p of data.pending) {
      const tr = document.createElement("tr");
      const what = p.action === "void" ? "void" : `amend to ${p.new.outcome}`;
      tr.append(cell(`#${p.request}`), cell(`coup ${p.coup}`), cell(what), cell(p.reason),
        cell(`by ${p.by}`));
      if (data.can_approve) {
        for (const [label, act] of [["Approve", "approve"], ["Reject", "reject"]]) {
          const b = document.createElement("button");
          b.textContent = label; b.dataset.decide = act; b.dataset.request = p.request;
          const td = document.createElement("td"); td.append(b); tr.append(td);
        }
      }
      pending.append(tr);
    }
  }

  async function confirm() {
    if (!entry.outcome) { say("Choose Banker, Player or Tie first", true); return; }
    // Send a copy and clear at once, so keys pressed while the coup is in flight start
    // the next entry; a refused coup is put back unless a new entry was begun.
    const sent = { ...entry };
    clear();
    if (!(await post({ action: "coup", ...sent })) && !entry.outcome) {
      Object.assign(entry, sent);
      showEntry();
    }
  }

  document.addEventListener("click", async (event) => {
    const t = event.target.closest("button");
    if (!t) return;
    if (t.dataset.outcome) { entry.outcome = t.dataset.outcome; showEntry(); }
    else if (t.dataset.toggle) { entry[t.dataset.toggle] = !entry[t.dataset.toggle]; showEntry(); }
    else if (t.id === "confirm") await confirm();
    else if (t.id === "clear") clear();
    else if (t.dataset.ask) await post({ action: "ask", outcome: t.dataset.ask });
    else if (t.id === "open-shoe") await post({ action: "open_shoe", shoe_id: $("shoe-id").value, rules: $("rules").value });
    else if (t.id === "close-shoe") { if (window.confirm("Close the shoe?")) await post({ action: "close_shoe" }); }
    else if (t.id === "close-table") await post({ action: "close_table" });
    else if (t.classList.contains("request-correction")) {
      const coup = Number(t.dataset.coup);
      const outcome = window.prompt(`Coup ${coup}: new outcome B, P or T — or VOID to void it`);
      if (!outcome) return;
      const reason = window.prompt("Reason for the correction") || "";
      const body = { action: "request_correction", shoe_id: state.shoe_id, coup, reason };
      if (outcome.toUpperCase() !== "VOID") body.outcome = outcome.toUpperCase();
      await post(body);
    } else if (t.dataset.decide) {
      await post({ action: t.dataset.decide, request: Number(t.dataset.request) });
    } else if (t.id === "logout") {
      await fetch("/logout", { method: "POST", headers: { "X-CSRF-Token": csrf } });
      location.href = "/login";
    }
  });

  $("cards-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { player_cards: $("player-cards").value, banker_cards: $("banker-cards").value };
    if (await post({ action: "coup", ...body })) {
      $("player-cards").value = ""; $("banker-cards").value = ""; $("card-preview").textContent = "";
    }
  });
  for (const id of ["player-cards", "banker-cards"]) {
    $(id).addEventListener("change", async () => {
      if (!$("player-cards").value || !$("banker-cards").value) return;
      const data = await post({ action: "preview", player_cards: $("player-cards").value,
        banker_cards: $("banker-cards").value });
      $("card-preview").textContent = data ? `By the tableau: ${data.message}` : "";
    });
  }

  const keys = { "1": "B", "2": "P", "3": "T", b: "B", p: "P", t: "T" };
  const toggles = { "4": "player_pair", "5": "banker_pair", "6": "natural" };
  document.addEventListener("keydown", async (event) => {
    if (event.target.matches("input, select, textarea")) return;
    const k = event.key.toLowerCase();
    if (keys[k]) { entry.outcome = keys[k]; showEntry(); }
    else if (toggles[k]) { entry[toggles[k]] = !entry[toggles[k]]; showEntry(); }
    else if (k === "enter") { event.preventDefault(); await confirm(); }
    else if (k === "escape" || k === "backspace" || k === "0") clear();
    else if (k === "7") await post({ action: "ask", outcome: "B" });
    else if (k === "8") await post({ action: "ask", outcome: "P" });
  });

  async function refresh() {
    const response = await fetch(`/operator/${encodeURIComponent(table)}/state`, { credentials: "same-origin" });
    if (response.ok) render(await response.json());
  }
  refresh();
  setInterval(refresh, 2000);
})();
