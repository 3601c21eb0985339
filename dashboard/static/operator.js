// Operator entry: keypad (mouse, touch, keyboard or numeric keypad) or cards, a mini Big
// Road to check each entry, and corrections in a form.
// Every action is one POST with the session's CSRF token; the server answers with the
// table's new state (in words: the server says every coup and correction), which is
// redrawn from scratch.
(function () {
  "use strict";
  const root = document.getElementById("operator");
  if (!root) return;
  const table = root.dataset.table, csrf = root.dataset.csrf;
  const entry = { outcome: null, player_pair: false, banker_pair: false, natural: false };
  const $ = (id) => document.getElementById(id);
  const NAMES = { B: "Banker", P: "Player", T: "Tie" };
  const FLAGS = [["player_pair", "Player pair"], ["banker_pair", "Banker pair"], ["natural", "natural"]];
  const PREVIEW_DELAY = 150; // ms after the last key typed
  let state = null;

  function say(text, error) {
    const box = $("message");
    box.textContent = text;
    box.className = error ? "error" : "ok";
  }

  async function send(body) {
    const response = await fetch(`/operator/${encodeURIComponent(table)}/action`, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (response.status === 401) location.href = `/login?next=${encodeURIComponent(location.pathname)}`;
    return { response, data };
  }

  // An action whose answer goes to the message bar; returns the answer, or null if refused.
  let answered = 0;  // actions whose answer was rendered (see refresh)

  async function post(body) {
    const { response, data } = await send(body);
    if (!response.ok) {
      say(data.detail ? String(data.detail) : `error ${response.status}`, true);
      return null;
    }
    if (data.table_id) { answered++; render(data); }
    if (data.ok === false) { say(data.detail, true); return null; }
    if (data.message) say(data.message, false);
    return data;
  }

  function showEntry() {
    const flags = FLAGS.filter(([k]) => entry[k]).map(([, label]) => label);
    $("entry").textContent = entry.outcome ? [NAMES[entry.outcome], ...flags].join(", ") : "—";
    document.querySelectorAll("[data-outcome]").forEach(
      (b) => b.classList.toggle("on", b.dataset.outcome === entry.outcome));
    document.querySelectorAll("[data-toggle]").forEach(
      (b) => b.setAttribute("aria-pressed", String(entry[b.dataset.toggle])));
  }

  function clear() {
    entry.outcome = null; entry.player_pair = entry.banker_pair = entry.natural = false;
    showEntry();
  }

  function cell(text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function button(text, data, className) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    Object.assign(b.dataset, data);
    if (className) b.className = className;
    const td = document.createElement("td");
    td.append(b);
    return td;
  }

  function render(data) {
    state = data;
    $("op-status").textContent = data.status;
    const road = $("mini-road");
    if (data.road) road.src = `data:image/svg+xml;base64,${data.road}`;
    road.hidden = !data.road;
    $("mini-road-empty").hidden = Boolean(data.road);
    const last = $("last");
    last.replaceChildren();
    for (const c of data.last) {
      const tr = document.createElement("tr");
      const cards = c.player_cards ? `Player ${c.player_cards.join(" ")} · Banker ${c.banker_cards.join(" ")}` : "";
      tr.append(cell(`#${c.coup}`, "coupno"), cell(NAMES[c.outcome], `o-${c.outcome}`),
        cell(c.flags), cell(cards),
        button("Correct…", { coup: c.coup }, "request-correction"));
      last.append(tr);
    }
    const pending = $("pending");
    pending.replaceChildren();
    for (const p of data.pending) {
      const tr = document.createElement("tr");
      tr.append(cell(`#${p.request}`), cell(`coup ${p.coup}`), cell(p.words),
        cell(`reason: ${p.reason}`), cell(`asked by ${p.by}`));
      if (data.can_approve) {
        tr.append(button("Approve", { decide: "approve", request: p.request }),
          button("Reject", { decide: "reject", request: p.request }));
      }
      pending.append(tr);
    }
    $("pending-none").hidden = data.pending.length > 0;
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

  // -- card entry with a live preview ------------------------------------------------------
  // Each keystroke clears the preview at once and asks again after a short pause; an answer
  // is shown only if it is for what the fields hold now, so a slow answer about an earlier
  // hand (or the previous coup) can never be shown.
  let previewAsked = 0, previewTimer = null;
  const hands = () => [$("player-cards").value.trim(), $("banker-cards").value.trim()];

  function showPreview(text, refused) {
    const out = $("card-preview");
    out.textContent = text;
    out.classList.toggle("refused", Boolean(refused));
  }

  function resetPreview() {
    previewAsked += 1;
    clearTimeout(previewTimer);
    showPreview("");
  }

  function previewSoon() {
    resetPreview();
    const [player, banker] = hands();
    if (!player || !banker) return;
    const asked = previewAsked;
    previewTimer = setTimeout(async () => {
      const { response, data } = await send({ action: "preview", player_cards: player, banker_cards: banker });
      const [p, b] = hands();
      if (asked !== previewAsked || p !== player || b !== banker) return; // stale
      if (response.ok && data.ok) showPreview(data.message, false);
      else showPreview(`Not a coup yet: ${data.detail || `error ${response.status}`}`, true);
    }, PREVIEW_DELAY);
  }

  for (const id of ["player-cards", "banker-cards"]) $(id).addEventListener("input", previewSoon);

  $("cards-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const [player, banker] = hands();
    resetPreview();
    if (await post({ action: "coup", player_cards: player, banker_cards: banker })) {
      $("player-cards").value = ""; $("banker-cards").value = "";
      resetPreview();
      $("player-cards").focus();
    } else {
      previewSoon();
    }
  });

  // -- corrections --------------------------------------------------------------------------
  const dialog = $("correction"), form = $("correction-form");

  function amendOn() {
    const amend = form.elements.correction.value === "amend";
    $("fix-amend").disabled = !amend;
  }

  function openCorrection(coup) {
    if (!state || !state.shoe_id) { say("No shoe in play: nothing to correct here", true); return; }
    const current = state.last.find((c) => c.coup === coup);
    form.reset();
    $("fix-error").textContent = "";
    form.elements.coup.value = coup || "";
    describe(current);
    if (current) {
      form.elements.outcome.value = current.outcome;
      for (const [k] of FLAGS) form.elements[k].checked = Boolean(current[k]);
      // The cards are not filled in: typed cards decide the whole coup, so they are typed
      // only to correct the cards (the coup's cards show as the placeholders).
      form.elements.player_cards.placeholder = (current.player_cards || ["9h", "Kd"]).join(" ");
      form.elements.banker_cards.placeholder = (current.banker_cards || ["2c", "3s", "5d"]).join(" ");
    }
    amendOn();
    dialog.showModal();
    $("fix-reason").focus();
  }

  function describe(current) {
    $("fix-now").textContent = current ? `Now: coup ${current.coup}, ${current.words}` : "";
  }

  form.addEventListener("change", (event) => {
    if (event.target.name === "correction") amendOn();
    if (event.target.name === "coup") describe(state.last.find((c) => c.coup === Number(event.target.value)));
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const f = form.elements;
    const body = { action: "request_correction", shoe_id: state.shoe_id, coup: f.coup.value,
      reason: f.reason.value, correction: f.correction.value };
    if (body.correction === "amend") {
      body.outcome = f.outcome.value || null;
      for (const [k] of FLAGS) body[k] = f[k].checked;
      body.player_cards = f.player_cards.value;
      body.banker_cards = f.banker_cards.value;
    }
    const { response, data } = await send(body);
    if (data.table_id) render(data);
    if (response.ok && data.ok) {
      dialog.close();
      say(data.message, false);
    } else {
      // Refused: the form stays open with everything typed, and says why.
      $("fix-error").textContent = data.detail ? String(data.detail) : `error ${response.status}`;
      const field = data.field && f[data.field];
      if (field && field.focus) field.focus();
    }
  });

  $("fix-cancel").addEventListener("click", () => dialog.close());

  // -- buttons and keys ---------------------------------------------------------------------
  document.addEventListener("click", async (event) => {
    const t = event.target.closest("button");
    if (!t || dialog.contains(t)) return;
    if (t.dataset.outcome) { entry.outcome = t.dataset.outcome; showEntry(); }
    else if (t.dataset.toggle) { entry[t.dataset.toggle] = !entry[t.dataset.toggle]; showEntry(); }
    else if (t.id === "confirm") await confirm();
    else if (t.id === "clear") clear();
    else if (t.dataset.ask) await post({ action: "ask", outcome: t.dataset.ask });
    else if (t.id === "open-shoe") await post({ action: "open_shoe", shoe_id: $("shoe-id").value, rules: $("rules").value });
    else if (t.id === "close-shoe") { if (window.confirm("Close the shoe?")) await post({ action: "close_shoe" }); }
    else if (t.id === "close-table") await post({ action: "close_table" });
    else if (t.classList.contains("request-correction")) openCorrection(Number(t.dataset.coup));
    else if (t.id === "correct-other") openCorrection(null);
    else if (t.dataset.decide) await post({ action: t.dataset.decide, request: Number(t.dataset.request) });
    else if (t.id === "logout") {
      await fetch("/logout", { method: "POST", headers: { "X-CSRF-Token": csrf } });
      location.href = "/login";
    }
  });

  const keys = { "1": "B", "2": "P", "3": "T", b: "B", p: "P", t: "T" };
  const toggles = { "4": "player_pair", "5": "banker_pair", "6": "natural" };
  document.addEventListener("keydown", async (event) => {
    if (dialog.open || event.target.matches("input, select, textarea")) return;
    const k = event.key.toLowerCase();
    if (keys[k]) { entry.outcome = keys[k]; showEntry(); }
    else if (toggles[k]) { entry[toggles[k]] = !entry[toggles[k]]; showEntry(); }
    else if (k === "enter") { event.preventDefault(); await confirm(); }
    else if (k === "escape" || k === "backspace" || k === "0") clear();
    else if (k === "7") await post({ action: "ask", outcome: "B" });
    else if (k === "8") await post({ action: "ask", outcome: "P" });
  });

  // A state asked for before an action's answer was shown may arrive after it: it is then
  // older than what the screen shows (e.g. "No open shoe" just after a shoe was opened).
  async function refresh() {
    const asked = answered;
    const response = await fetch(`/operator/${encodeURIComponent(table)}/state`, { credentials: "same-origin" });
    if (!response.ok) return;
    const data = await response.json();
    if (asked === answered) render(data);
  }
  refresh();
  setInterval(refresh, 2000);
})();
