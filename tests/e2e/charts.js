// Measures the table page (/tables/<id>) as drawn and lists what is clipped or overlapping:
// each chart's title, subtitle, legend and axis titles must lie inside the chart and clear
// of each other and of the plot area. Run with Playwright's page.evaluate.
() => {
  const problems = [];
  const box = (el) => el.getBoundingClientRect();
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 &&
    a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const charts = [];
  for (const plot of document.querySelectorAll(".js-plotly-plot")) {
    const frame = box(plot.querySelector("svg.main-svg"));
    const title = plot.querySelector(".gtitle");
    const name = title ? title.textContent : "untitled chart";
    charts.push(name);
    const parts = {};
    for (const [part, selector] of Object.entries({
      title: ".gtitle", subtitle: ".gtitle-subtitle", legend: "g.legend", "x title": ".xtitle",
      "y title": ".ytitle", plot: ".nsewdrag",
    })) {
      const el = plot.querySelector(selector);
      if (el && box(el).width > 0) parts[part] = box(el);
    }
    for (const [part, r] of Object.entries(parts)) {
      if (!inside(r, frame)) problems.push(`${name}: ${part} clipped`);
    }
    const names = Object.keys(parts);
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        if (meet(parts[names[i]], parts[names[j]])) {
          problems.push(`${name}: ${names[i]} overlaps ${names[j]}`);
        }
      }
    }
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) {
    problems.push(`page wider than the screen: ${page.scrollWidth} > ${page.clientWidth}`);
  }
  const rect = (selector) => {
    const el = document.querySelector(selector);
    if (!el) return null;
    const r = box(el);
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width};
  };
  return {problems, charts, page: page.clientWidth, board: rect(".table-board"),
          odds: rect(".odds-panel")};
}
