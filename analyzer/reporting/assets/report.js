// padiff-trace HTML report: the pair tables, built from the embedded JSON (the plots are inline SVG).
// Every string from a trace is inserted with textContent, never as HTML, and with its control
// and bidi characters shown as escapes (\x1b, \u202e), as padiff_trace.visible does.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
  const NAMED = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };
  const visible = (s) => s.replace(INVISIBLE, (c) => {
    const n = c.charCodeAt(0);
    return NAMED[c] || (n < 256 ? "\\x" + n.toString(16).padStart(2, "0") : "\\u" + n.toString(16).padStart(4, "0"));
  });
  const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) && Math.abs(v) < 1e6 ? String(v) : v === 0 ? "0" : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e4 ? v.toExponential(2) : v.toPrecision(4)) : v == null ? "" : String(v));
  // columns: [key, label, numeric, description]; the metric columns come from the analyzer's metric table
  const COLS = data.columns.map((c) => [c.key, c.label, c.num, c.title]);

  function buildTable(host, rows, firstIndex) {
    const wrap = document.createElement("div");
    const controls = document.createElement("div");
    controls.className = "controls";
    const text = document.createElement("input");
    text.placeholder = "filter module path…";
    text.className = "filter-text";
    const role = document.createElement("select");
    role.className = "filter-kind";
    const verdict = document.createElement("select");
    verdict.className = "filter-verdict";
    for (const [sel, values] of [[role, ["", ...new Set(rows.map((r) => r.role))]], [verdict, ["", "FAIL", "ok"]]]) {
      for (const v of values) {
        const o = document.createElement("option");
        o.value = v;
        o.textContent = v === "" ? "(all)" : v;
        sel.appendChild(o);
      }
    }
    const count = document.createElement("span");
    count.className = "muted row-count";
    controls.append("module ", text, " kind ", role, " verdict ", verdict, count);
    const tw = document.createElement("div");
    tw.className = "tablewrap";
    const table = document.createElement("table");
    const thead = table.createTHead().insertRow();
    let sortKey = "index", sortDir = 1;
    for (const [key, label, , title] of COLS) {
      const th = document.createElement("th");
      th.textContent = label;
      if (title) th.title = title;
      th.dataset.key = key;
      th.addEventListener("click", () => { sortDir = sortKey === key ? -sortDir : 1; sortKey = key; render(); });
      thead.appendChild(th);
    }
    const tbody = table.createTBody();
    tw.appendChild(table);
    wrap.append(controls, tw);
    host.appendChild(wrap);

    function render() {
      const q = text.value.trim().toLowerCase();
      const shown = rows.filter((r) =>
        (!q || r.a.toLowerCase().includes(q) || r.b.toLowerCase().includes(q)) &&
        (!role.value || r.role === role.value) && (!verdict.value || r.verdict === verdict.value));
      shown.sort((x, y) => {
        const a = x[sortKey], b = y[sortKey];
        return (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))) * sortDir;
      });
      tbody.replaceChildren();
      for (const r of shown.slice(0, 5000)) {
        const tr = tbody.insertRow();
        if (r.verdict === "FAIL") tr.classList.add("fail");
        if (r.index === firstIndex) tr.classList.add("first");
        for (const [key, , num] of COLS) {
          const td = tr.insertCell();
          td.textContent = num ? fmt(r[key]) : r[key] == null ? "" : visible(String(r[key]));
          if (num) td.className = "num";
          if (key === "cls" && r.cls) td.className = "cls-" + r.cls.replace(/[^a-z_]/g, "");
        }
      }
      count.textContent = ` ${shown.length} of ${rows.length} rows` + (shown.length > 5000 ? " (first 5000 shown)" : "");
    }
    for (const el of [text, role, verdict]) el.addEventListener("input", render);
    return { text, role, verdict, render };
  }

  const tables = {};
  for (const [id, key] of [["table-pairs", "pairs"], ["table-weights", "weights"], ["table-grads", "param_grads"]]) {
    const host = document.getElementById(id);
    if (host && data.rows[key].length) tables[key] = buildTable(host, data.rows[key], data.first_index);
    else if (host) host.textContent = "none recorded";
  }
  // Initial filters from the URL: #module=...&kind=...&verdict=...
  const params = new URLSearchParams(location.hash.slice(1));
  if (tables.pairs) {
    if (params.get("module")) tables.pairs.text.value = params.get("module");
    if (params.get("kind")) tables.pairs.role.value = params.get("kind");
    if (params.get("verdict")) tables.pairs.verdict.value = params.get("verdict");
  }
  for (const t of Object.values(tables)) t.render();
})();
