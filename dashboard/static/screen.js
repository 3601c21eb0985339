// Table-side screen: one WebSocket, automatic reconnect.
// A "state" message replaces the whole screen body (the first one on every connection, and
// after a new shoe or a correction); an "update" holds only what changed since the state the
// screen shows ("base"), as operations on it — cells added to a road, parts replaced. An
// update made from another state than the one shown is never applied: the screen reconnects
// and gets the whole state. A state older than the one shown is ignored, so the screen is
// never partial or out of order.
(function () {
  "use strict";
  const root = document.getElementById("screen-root");
  if (!root) return;
  const body = document.getElementById("screen-body");
  const banner = document.getElementById("connection");
  const table = root.dataset.table;
  let lang = root.dataset.lang;
  const theme = root.dataset.theme;
  let shown = -1, socket = null, delay = 250, watchdog = null, askTimer = null;

  // Each road is drawn with the whole shoe; show the newest columns that fit its box at
  // square cells (width filled exactly, never taller than the box).
  function fit() {
    body.querySelectorAll("svg.road-svg").forEach((svg) => {
      const box = svg.parentElement;
      const w = box.clientWidth, h = box.clientHeight;
      if (!w || !h) return;
      const unit = Number(svg.dataset.cell), rows = Number(svg.dataset.rows);
      const drawn = Number(svg.dataset.columns), last = Number(svg.dataset.last);
      const columns = Math.min(drawn, Math.max(1, Math.ceil(w / (h / rows) - 0.001)));
      const cell = Math.min(w / columns, h / rows);
      const first = Math.max(0, last + 1 - columns);
      svg.setAttribute("viewBox", `${first * unit} 0 ${columns * unit} ${rows * unit}`);
      svg.style.width = `${columns * cell}px`;
      svg.style.height = `${rows * cell}px`;
    });
  }
  new ResizeObserver(fit).observe(root);

  function ask(outcome) {
    root.classList.remove("asking-b", "asking-p");
    void root.offsetWidth; // restart the blink
    root.classList.add("asking-" + outcome.toLowerCase());
    clearTimeout(askTimer);
    askTimer = setTimeout(() => root.classList.remove("asking-b", "asking-p"), 4000);
  }

  // The update's operations, in order: set attributes, replace an element's content or the
  // element itself, or replace a road's cells from one on ("tail"). HTML inside an SVG
  // element is parsed as SVG. Nothing changes unless every operation finds its element.
  function apply(ops) {
    const found = ops.map(([, selector]) => body.querySelector(selector));
    if (found.includes(null)) return false;
    for (const [i, [kind, , a, b]] of ops.entries()) {
      const el = found[i];
      if (kind === "set") {
        for (const [name, value] of Object.entries(a)) el.setAttribute(name, value);
      } else if (kind === "inner") {
        el.innerHTML = a;
      } else if (kind === "outer") {
        el.outerHTML = a;
      } else if (kind === "tail") {
        while (el.children.length > a) el.lastElementChild.remove();
        el.insertAdjacentHTML("beforeend", b);
      } else {
        return false;
      }
    }
    return true;
  }

  function shows(msg) {
    shown = msg.seq;
    fit();
    root.dataset.sent = String(msg.sent);
    root.dataset.seq = String(msg.seq);
    root.dataset.status = msg.status;
    banner.hidden = true;
  }

  function arm() {
    clearTimeout(watchdog);
    // The server pings every 15 s: silence for 40 s means a dead connection.
    watchdog = setTimeout(() => socket && socket.close(), 40000);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${location.host}/ws/tables/${encodeURIComponent(table)}` +
      `?lang=${encodeURIComponent(lang)}&theme=${encodeURIComponent(theme)}`;
    socket = new WebSocket(url);
    socket.onopen = () => { delay = 250; arm(); };
    socket.onmessage = (event) => {
      arm();
      const msg = JSON.parse(event.data);
      if (msg.type === "state") {
        if (msg.seq < shown) return;
        body.innerHTML = msg.html;
        shows(msg);
      } else if (msg.type === "update") {
        if (msg.base !== shown || !apply(msg.ops)) {
          socket.close();  // not from what is shown: start again from the whole state
          return;
        }
        shows(msg);
      } else if (msg.type === "ask") {
        ask(msg.outcome);
      }
    };
    socket.onclose = () => {
      clearTimeout(watchdog);
      banner.hidden = false;
      // A restarted server may reuse nothing: the next connection resends the full state.
      shown = -1;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 4000);
    };
    socket.onerror = () => socket.close();
  }

  document.addEventListener("click", (event) => {
    const box = event.target.closest && event.target.closest(".ask-box");
    if (box) ask(box.classList.contains("ask-b") ? "B" : "P");
    const button = event.target.closest && event.target.closest("button.lang");
    if (button) {
      // Switch language in place: reconnect with the new language, which resends the state.
      lang = button.dataset.lang;
      const url = new URL(location.href);
      url.searchParams.set("lang", lang);
      history.replaceState(null, "", url.toString());
      document.documentElement.lang = lang;
      document.querySelectorAll("button.lang").forEach(
        (b) => b.classList.toggle("on", b.dataset.lang === lang));
      delay = 0;
      socket.close();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "b" || event.key === "B") ask("B");
    if (event.key === "p" || event.key === "P") ask("P");
  });
  connect();
})();
