// Measures a table screen as drawn and lists what is wrong with its layout.
// Run with Playwright's page.evaluate; returns {sizes, problems}.
//   sizes: road cells in px (from each road's grid as drawn), computed font sizes of the
//          section titles, counts, ask labels, bead letters and card faces.
//   problems: elements outside the viewport, overlapping a sibling, or whose content
//             overflows their box (clipped text, cards spilling out of a panel).
() => {
  const root = document.getElementById("screen-body");
  const W = document.documentElement.clientWidth, H = document.documentElement.clientHeight;
  const slack = 1;
  const problems = [];
  const name = (el) => {
    const cls = el.getAttribute("class");
    const text = (el.textContent || "").trim().slice(0, 24);
    return `${el.tagName.toLowerCase()}${cls ? "." + cls.split(" ").join(".") : ""}` +
      (text ? ` "${text}"` : "");
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && style.visibility !== "hidden" &&
      style.display !== "none";
  };
  // Layout boxes: HTML elements and outermost SVGs, never the marks inside an SVG.
  const boxes = [...root.querySelectorAll("*")].filter(
    (el) => !(el.ownerSVGElement) && visible(el));
  for (const el of boxes) {
    const r = el.getBoundingClientRect();
    if (r.left < -slack || r.top < -slack || r.right > W + slack || r.bottom > H + slack) {
      problems.push(`outside the ${W}x${H} viewport: ${name(el)} ` +
        `[${r.left.toFixed(0)},${r.top.toFixed(0)} → ${r.right.toFixed(0)},` +
        `${r.bottom.toFixed(0)}]`);
    }
    const style = getComputedStyle(el);
    if (el.tagName !== "svg" && style.display !== "inline" &&
        (el.scrollWidth > el.clientWidth + slack || el.scrollHeight > el.clientHeight + slack)) {
      problems.push(`content overflows: ${name(el)} (${el.scrollWidth}x${el.scrollHeight} ` +
        `in ${el.clientWidth}x${el.clientHeight})`);
    }
    if (el.tagName === "svg") continue;  // an SVG's marks may touch: it is one picture
    const kids = [...el.children].filter((k) => visible(k) &&
      !["absolute", "fixed"].includes(getComputedStyle(k).position));
    for (let i = 0; i < kids.length; i++) {
      for (let j = i + 1; j < kids.length; j++) {
        const a = kids[i].getBoundingClientRect(), b = kids[j].getBoundingClientRect();
        const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (x > slack && y > slack) {
          problems.push(`overlap: ${name(kids[i])} and ${name(kids[j])}`);
        }
      }
    }
  }
  // The language buttons float over the footer's empty corner, never over content.
  const langs = document.getElementById("languages");
  if (langs && visible(langs)) {
    const l = langs.getBoundingClientRect();
    for (const el of root.querySelectorAll(".board, .note, .road, .lower > *")) {
      const r = el.getBoundingClientRect();
      const x = Math.min(l.right, r.right) - Math.max(l.left, r.left);
      const y = Math.min(l.bottom, r.bottom) - Math.max(l.top, r.top);
      if (x > slack && y > slack) problems.push(`language buttons cover ${name(el)}`);
    }
  }
  const px = (el) => parseFloat(getComputedStyle(el).fontSize);
  const min = (values) => (values.length ? Math.min(...values) : null);
  const cells = {};
  for (const svg of root.querySelectorAll("svg.road-svg")) {
    const road = svg.querySelector("g.road").getAttribute("class").split(" ")[1];
    const grid = svg.querySelector("g.road > rect").getBoundingClientRect();
    cells[road] = {
      height: grid.height / Number(svg.dataset.rows),
      width: grid.width / Number(svg.dataset.columns),
    };
  }
  const bead = root.querySelector("svg.road-svg g.bead_plate");
  let beadLetter = null;
  if (bead) {
    const svg = bead.ownerSVGElement;
    const scale = svg.getBoundingClientRect().height / svg.viewBox.baseVal.height;
    beadLetter = min([...bead.querySelectorAll("text")].map(
      (t) => Number(t.getAttribute("font-size")) * scale));
  }
  return {
    problems,
    sizes: {
      cells,
      smallest_cell: min(Object.values(cells).flatMap((c) => [c.width, c.height])),
      titles: min([...root.querySelectorAll("h2")].map(px)),
      counts: min([...root.querySelectorAll("table.shares th, table.shares td")].map(px)),
      ask_labels: min([...root.querySelectorAll(".ask-label")].map(px)),
      header: min([...root.querySelectorAll("header span")].map(px)),
      cards: min([...root.querySelectorAll(".card")].map(px)),
      bead_letters: beadLetter,
      board_bottom: Math.max(...[...root.querySelectorAll(".road, .lower > *")].map(
        (el) => el.getBoundingClientRect().bottom)) / H,
    },
  };
}
