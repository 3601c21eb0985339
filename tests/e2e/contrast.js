// Every text on the page against what it is drawn on, as WCAG 2 computes contrast: the
// text's colour (its opacity and its ancestors' folded in) over the first opaque
// background behind it (white if none). Returns [{text, ratio, color, background}] for
// each element with visible text of its own, form controls and links included.
() => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a: a === undefined ? 1 : a };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a), a: 1 });
  const luminance = ({ r, g, b }) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg.a > 0) { layers.push(bg); if (bg.a >= 1) break; }
    }
    let colour = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const own = (el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const style = getComputedStyle(el);
    const control = el.matches("input:not([type=hidden]):not([type=checkbox]):not([type=radio]), select, button, textarea");
    if (!(own(el) || control) || el.matches("option, script, style")) continue;
    const box = el.getBoundingClientRect();
    if (style.visibility === "hidden" || style.display === "none" || !box.width || !box.height) continue;
    const bg = background(el);
    const fg = parse(style.color);
    const text = over({ ...fg, a: fg.a * opacity(el) }, bg);
    const [hi, lo] = [luminance(text), luminance(bg)].sort((a, b) => b - a);
    out.push({ text: (el.innerText || el.value || el.tagName).trim().slice(0, 40),
      tag: el.tagName, ratio: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100,
      color: style.color, background: `rgb(${bg.r}, ${bg.g}, ${bg.b})` });
  }
  return out;
}
