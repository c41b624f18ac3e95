"use strict";
// Case tables of the llmjudge report: drawn from the inline JSON block, a page at a time.
// Case text is untrusted: it only ever reaches the page through textContent.
(() => {
  const PAGE_SIZE = 100;
  const RESULT_ORDER = { fail: 0, error: 1, skip: 2, pass: 3 };
  const PAIR_PILL = { win: "pass", loss: "fail", error: "error", inconsistent: "warn" }; // pairwise outcomes
  const REQUEST_PARTS = ["Input", "Output", "Expected output"];
  const data = JSON.parse(document.getElementById("data").textContent);
  const filters = { failed: false, flaky: false, disagree: false, outcome: "", query: "" };
  const tables = [];

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function percent(value) {
    if (value === null || value === undefined) return "–";
    const text = (value * 100).toFixed(1);
    return (text.endsWith(".0") ? text.slice(0, -2) : text) + "%";
  }

  function numberText(value) {
    return value === null || value === undefined ? "–" : String(Math.round(value * 1000) / 1000);
  }

  function pill(kind, text) {
    return el("span", "pill " + kind.replace(/ /g, "-"), text);
  }

  function haystack(c) {
    if (c.haystack === undefined) {
      const parts = [c.id, c.reason, c.nodeid, c.location].concat(c.request || []);
      c.haystack = parts.join("\n").toLowerCase();
    }
    return c.haystack;
  }

  function matches(c) {
    if (filters.failed && c.result !== "fail") return false;
    if (filters.flaky && !c.flaky) return false;
    if (filters.disagree && !c.disagree) return false;
    if (filters.outcome && !(c.pairwise && c.pairwise.kinds.includes(filters.outcome))) return false;
    return !filters.query || haystack(c).includes(filters.query);
  }

  function nullsLast(get) {
    return (a, b) => {
      const x = get(a);
      const y = get(b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return x < y ? -1 : 1;
    };
  }

  const COMPARE = {
    id: (a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }),
    result: (a, b) => RESULT_ORDER[a.result] - RESULT_ORDER[b.result],
    score: nullsLast((c) => c.score),
    flaky: (a, b) => Number(b.flaky) - Number(a.flaky) || nullsLast((c) => c.stability)(a, b),
    label: nullsLast((c) => c.label),
    disagree: (a, b) => Number(b.disagree) - Number(a.disagree),
    reason: (a, b) => a.reason.localeCompare(b.reason),
  };

  function caseRow(table, c) {
    const row = el("tr", "case " + c.result);
    const toggleCell = el("td");
    const toggle = el("button", "toggle", table.open.has(c.n) ? "▼" : "▶");
    toggle.type = "button";
    toggle.dataset.n = String(c.n);
    toggle.setAttribute("aria-expanded", String(table.open.has(c.n)));
    toggle.setAttribute("aria-label", "show the compiled request");
    toggleCell.appendChild(toggle);
    row.appendChild(toggleCell);
    row.appendChild(el("td", "id")).appendChild(el("code", "", c.id));
    const verdict = row.appendChild(el("td"));
    verdict.appendChild(pill(c.result, c.result));
    if (c.uncertain) verdict.append(" ", pill("warn", "review"));
    if (c.pairwise) verdict.append(" ", pill(PAIR_PILL[c.pairwise.outcome] || "none", c.pairwise.outcome));
    row.appendChild(el("td", "num", numberText(c.score)));
    const stability = table.repeats > 1 && c.stability !== null ? "stable " + percent(c.stability) : "";
    const flaky = row.appendChild(el("td", "", c.flaky ? "" : stability));
    if (c.flaky) flaky.append(pill("warn", "flaky"), " " + stability);
    row.appendChild(el("td", "", c.label || "–"));
    const agreement = row.appendChild(el("td"));
    if (c.disagree) agreement.appendChild(pill("fail", "disagrees"));
    else if (c.label && (c.result === "pass" || c.result === "fail")) agreement.textContent = "agrees";
    row.appendChild(el("td", "reason")).appendChild(el("div", "clip", c.reason));
    return row;
  }

  function pre(parent, title, text) {
    parent.appendChild(el("h5", "", title));
    parent.appendChild(el("pre", "", text));
  }

  // a sample's cost in this run: what it saved when cached; "unknown" without a price
  function dollars(s) {
    if (s.cost_usd === undefined) return "–";
    if (s.cost_usd === null) return "unknown";
    const amount = s.cached && s.saved_usd ? s.saved_usd : s.cost_usd;
    const text = "$" + (amount >= 1 ? amount.toFixed(2) : String(Number(amount.toFixed(6))));
    return s.cached && s.saved_usd ? text + " saved" : text;
  }

  function samplesTable(samples) {
    const table = el("table", "samples");
    const head = table.appendChild(el("thead")).appendChild(el("tr"));
    for (const title of ["sample", "verdict", "score", "reason", "cached", "tokens in/out", "cost", "latency", "error"]) {
      head.appendChild(el("th", "", title));
    }
    const body = table.appendChild(el("tbody"));
    for (const s of samples) {
      const row = body.appendChild(el("tr"));
      row.appendChild(el("td", "num", s.index));
      const verdict = s.pass === null ? "none" : s.pass ? "pass" : "fail";
      row.appendChild(el("td")).appendChild(pill(verdict === "none" ? "error" : verdict, verdict));
      row.appendChild(el("td", "num", numberText(s.score)));
      row.appendChild(el("td", "reason", s.reason + (s.uncertain ? " (uncertain)" : "")));
      row.appendChild(el("td", "", s.cached ? "yes" : "no"));
      row.appendChild(el("td", "num", s.input_tokens + " / " + s.output_tokens));
      row.appendChild(el("td", "num", dollars(s)));
      row.appendChild(el("td", "num", s.latency_s === null ? "–" : s.latency_s.toFixed(2) + " s"));
      row.appendChild(el("td", "", s.error || ""));
    }
    return table;
  }

  function judgesTable(panel) {
    // a panel's case: each member's verdict and reason, then the vote
    const table = el("table", "samples");
    const head = table.appendChild(el("thead")).appendChild(el("tr"));
    for (const title of ["judge", "verdict", "reason", "cached", "tokens in/out", "error"]) {
      head.appendChild(el("th", "", title));
    }
    const body = table.appendChild(el("tbody"));
    for (const m of panel.members) {
      const row = body.appendChild(el("tr"));
      row.appendChild(el("td", "", m.model));
      const verdict = m.pass === null ? "none" : m.pass ? "pass" : "fail";
      // pairwise: the candidate's outcome by this judge (its pass: not a loss)
      row.appendChild(el("td")).appendChild(pill(verdict === "none" ? "error" : verdict, m.outcome || verdict));
      row.appendChild(el("td", "reason", m.reason));
      row.appendChild(el("td", "", m.cached ? "yes" : "no"));
      row.appendChild(el("td", "num", m.input_tokens + " / " + m.output_tokens));
      row.appendChild(el("td", "", m.error || ""));
    }
    return table;
  }

  function pairPanel(parent, pair) {
    const sides = parent.appendChild(el("div", "pair"));
    const candidate = sides.appendChild(el("div"));
    pre(candidate, "Candidate output", pair.candidate === null ? "–" : pair.candidate);
    const baseline = sides.appendChild(el("div"));
    const source = pair.baseline_source ? " (" + pair.baseline_source + ")" : "";
    pre(baseline, "Baseline output" + source, pair.baseline === null ? "none: unpaired, never judged" : pair.baseline);
    parent.appendChild(el("h5", "", "Judgments, both orders"));
    if (!pair.answers.length) {
      const why = pair.kinds.includes("identical") ? "identical outputs: a tie without a judge call" : "not judged";
      parent.appendChild(el("p", "note", why));
    }
    const list = parent.appendChild(el("ul", "answers"));
    for (const a of pair.answers) {
      const item = list.appendChild(el("li", "", a.line));
      if (a.cached) item.append(" ", pill("none", "cached"));
      if (a.error) item.append(" ", pill("error", a.error));
    }
    if (pair.consistent === false) parent.appendChild(el("p", "note", "The judge answered differently in the two orders."));
  }

  function detailRow(table, c) {
    const row = el("tr", "detail");
    const cell = row.appendChild(el("td"));
    cell.colSpan = 8;
    const meta = [c.location, c.nodeid, c.digest ? "request " + c.digest.slice(0, 12) : ""];
    cell.appendChild(el("p", "note", meta.filter(Boolean).join(" · ")));
    if (!c.pairwise) {
      // what an author reads first: the output judged and what was expected, then the reason
      if (c.produced) pre(cell, "Output judged (" + c.produced.source + ")", c.produced.output);
      if (c.expected !== null) pre(cell, "Expected output", c.expected);
    }
    pre(cell, "Reason", c.reason || "–");
    if (c.pairwise) pairPanel(cell, c.pairwise);
    if (c.panel) {
      const split = c.panel.split ? ", split: listed for review" : "";
      cell.appendChild(el("h5", "", "Panel of judges (" + c.panel.rule + ", " + c.panel.decision + split + ")"));
      cell.appendChild(judgesTable(c.panel));
    }
    if (c.samples.length) {
      cell.appendChild(el("h5", "", "Judge samples"));
      cell.appendChild(samplesTable(c.samples));
    }
    if (table.bench.instructions === null && c.request === null) {
      cell.appendChild(el("p", "note", "No compiled judge request: this case was decided without the judge."));
      return row;
    }
    cell.appendChild(el("h4", "", "Compiled request"));
    if (table.bench.instructions !== null) {
      pre(cell, "Instructions (every case of " + table.bench.code + ")", table.bench.instructions);
      pre(cell, "Rubric (every case of " + table.bench.code + ")", table.bench.rubric);
    }
    (c.request || []).forEach((text, index) => pre(cell, REQUEST_PARTS[index], text));
    return row;
  }

  function visibleCases(table) {
    const rows = table.bench.cases.filter(matches);
    if (table.sortKey) {
      const compare = COMPARE[table.sortKey];
      const sign = table.sortDir === "descending" ? -1 : 1;
      rows.sort((a, b) => sign * compare(a, b) || a.n - b.n);
    }
    return rows;
  }

  function render(table) {
    const rows = visibleCases(table);
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    table.page = Math.min(table.page, pages - 1);
    const fragment = document.createDocumentFragment();
    for (const c of rows.slice(table.page * PAGE_SIZE, (table.page + 1) * PAGE_SIZE)) {
      fragment.appendChild(caseRow(table, c));
      if (table.open.has(c.n)) fragment.appendChild(detailRow(table, c));
    }
    table.body.replaceChildren(fragment);
    const total = table.bench.cases.length;
    table.count.textContent = rows.length === total ? total + " cases" : rows.length + " of " + total + " cases";
    table.wrap.hidden = rows.length === 0;
    table.empty.hidden = rows.length !== 0;
    table.pager.hidden = pages === 1;
    table.pageText.textContent = "page " + (table.page + 1) + " of " + pages;
    table.prev.disabled = table.page === 0;
    table.next.disabled = table.page === pages - 1;
    return rows.length;
  }

  function renderAll() {
    let shown = 0;
    let total = 0;
    for (const table of tables) {
      shown += render(table);
      total += table.bench.cases.length;
    }
    document.getElementById("shown").textContent = shown === total ? total + " cases" : shown + " of " + total + " cases";
  }

  function toggleCase(table, button) {
    const n = Number(button.dataset.n);
    const row = button.closest("tr");
    if (table.open.has(n)) {
      table.open.delete(n);
      if (row.nextSibling && row.nextSibling.classList.contains("detail")) row.nextSibling.remove();
    } else {
      table.open.add(n);
      const c = table.bench.cases.find((item) => item.n === n);
      row.after(detailRow(table, c));
    }
    button.textContent = table.open.has(n) ? "▼" : "▶";
    button.setAttribute("aria-expanded", String(table.open.has(n)));
  }

  function sortBy(table, button) {
    const key = button.dataset.sort;
    table.sortDir = table.sortKey === key && table.sortDir === "ascending" ? "descending" : "ascending";
    table.sortKey = key;
    table.page = 0;
    for (const th of table.section.querySelectorAll("th")) th.removeAttribute("aria-sort");
    button.parentElement.setAttribute("aria-sort", table.sortDir);
    render(table);
  }

  function setUp(section) {
    const bench = data.benchmarks[Number(section.dataset.bench)];
    bench.cases.forEach((c, index) => {
      c.n = index;
    });
    const pager = section.querySelector("nav.pager");
    const table = {
      bench,
      section,
      body: section.querySelector("tbody"),
      wrap: section.querySelector(".scroll"),
      empty: section.querySelector(".empty"),
      count: section.querySelector(".count"),
      pager,
      pageText: pager.querySelector(".page"),
      prev: pager.querySelector('[data-page="-1"]'),
      next: pager.querySelector('[data-page="1"]'),
      page: 0,
      sortKey: null,
      sortDir: "ascending",
      open: new Set(),
    };
    section.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      if (button.dataset.n !== undefined) toggleCase(table, button);
      else if (button.dataset.sort) sortBy(table, button);
      else if (button.dataset.page) {
        table.page += Number(button.dataset.page);
        render(table);
        section.scrollIntoView();
      }
    });
    tables.push(table);
  }

  function readFilters(form) {
    filters.failed = form.elements.failed.checked;
    filters.flaky = form.elements.flaky.checked;
    filters.disagree = form.elements.disagree.checked;
    filters.outcome = form.elements.outcome ? form.elements.outcome.value : "";
    filters.query = form.elements.query.value.trim().toLowerCase();
    for (const table of tables) table.page = 0;
    renderAll();
  }

  document.querySelectorAll("section.bench").forEach(setUp);
  const form = document.getElementById("filters");
  let pending = 0;
  form.addEventListener("change", () => readFilters(form));
  form.addEventListener("input", (event) => {
    if (event.target.name !== "query") return;
    clearTimeout(pending);
    pending = setTimeout(() => readFilters(form), 120);
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  renderAll();
  void document.body.offsetHeight; // lay the rows out before marking them shown
  performance.mark("llmjudge:rows-shown");
  document.body.dataset.ready = "1";
})();
