// Energy: consumption per period (day: hourly bars, week and month: daily, year: monthly), split
// into peak (hp) and off-peak (hc) hours, with production beside it and the costs at today's prices
// (GET /energy/history), and the split per submeter (GET /energy/by-usage).

import { get } from "../api.js";
import { h, clear, errorBox } from "../dom.js";
import { t } from "../i18n.js";
import { chart, bars, colors, seconds } from "../widgets/chart.js";

const PERIODS = [["day", "Day"], ["week", "Week"], ["month", "Month"], ["year", "Year"]];
const STEP = { day: [0, 0, 1], week: [0, 0, 7], month: [0, 1, 0], year: [1, 0, 0] };

export async function render(main) {
  let period = new URLSearchParams(location.search).get("period") || "day";
  let date = new Date();
  let plot = null;
  const error = errorBox();
  const buttons = PERIODS.map(([key, label]) =>
    h("button", { type: "button", dataset: { period: key }, onclick: () => { period = key; load(); } }, t(label)));
  const dateInput = h("input", { type: "date", id: "energy-date", "aria-label": "Date" });
  dateInput.addEventListener("change", () => {
    if (dateInput.value) date = new Date(`${dateInput.value}T12:00:00`);
    load();
  });
  const shift = (sign) => {
    const [y, m, d] = STEP[period];
    date = new Date(date.getFullYear() + sign * y, date.getMonth() + sign * m, date.getDate() + sign * d, 12);
    load();
  };
  const totals = h("div", { class: "totals", id: "energy-totals" });
  const area = h("div", { class: "chart card", id: "energy-chart" });
  const usage = h("div", { class: "table-wrap", id: "energy-usage" });
  const statusLine = h("p", { class: "muted", id: "energy-status" });
  main.append(
    h("h1", {}, t("Energy")), error, statusLine,
    h("div", { class: "toolbar" },
      h("div", { class: "segmented", role: "group", "aria-label": "Period" }, buttons),
      h("button", { type: "button", "aria-label": "Previous", onclick: () => shift(-1) }, "‹"),
      dateInput,
      h("button", { type: "button", "aria-label": "Next", onclick: () => shift(1) }, "›")),
    totals, area, h("h2", {}, "By usage"), usage);

  const status = await get("/energy/status").catch(() => null);
  if (status && !status.available) statusLine.textContent = "No energy meter yet: an administrator creates a main meter equipment from a device.";
  if (status && status.available && !status.tariffConfigured) statusLine.textContent = "No tariff set: costs show as 0.";

  async function load() {
    error.show(null);
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.period === period));
    dateInput.value = localDate(date);
    const query = `period=${period}&date=${localDate(date)}`;
    try {
      const [history, byUsage] = await Promise.all([get(`/energy/history?${query}`), get(`/energy/by-usage?${query}`).catch(() => null)]);
      drawTotals(totals, history.totals);
      if (plot) plot.dispose();
      plot = drawChart(area, history, period);
      drawUsage(usage, byUsage);
      main.dataset.loaded = `${period}:${localDate(date)}`; // what the browser tests wait for
    } catch (e) {
      error.show(e);
    }
  }
  await load();
  return () => plot && plot.dispose();
}

function localDate(d) {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

const kwh = (wh) => `${(wh / 1000).toFixed(wh >= 10_000 ? 1 : 2)} kWh`;
const euros = (value) => `${value.toFixed(2)} €`;

function drawTotals(box, totals) {
  clear(box);
  const item = (key, label, text) => box.append(h("div", { class: "card total", dataset: { total: key } }, h("span", { class: "muted" }, label), h("strong", {}, text)));
  item("consumption", "Consumption", kwh(totals.total_consumption));
  item("hp", "Peak hours", kwh(totals.total_hp));
  item("hc", "Off-peak hours", kwh(totals.total_hc));
  item("production", "Production", kwh(totals.total_production));
  item("autoconso", "Self-consumed", kwh(totals.total_autoconso));
  item("cost", "Cost", euros(totals.cost_total));
}

function drawChart(area, history, period) {
  clear(area);
  const c = colors();
  const points = history.points;
  const x = points.map((p) => seconds(p.time));
  const hp = points.map((p) => p.hp / 1000);
  const hc = points.map((p) => p.hc / 1000);
  const total = points.map((p, i) => hp[i] + hc[i]);
  const prod = points.map((p) => p.prod / 1000);
  const fmt = (u, v) => (v == null ? "–" : `${v.toFixed(2)} kWh`);
  // Stacked bars: the total (drawn in the off-peak colour) with the peak part over it.
  return chart(area, {
    height: 280,
    scales: { x: { time: true, range: (u, min, max) => padRange(min, max, x) } },
    yValues: (u, ticks) => ticks.map((v) => `${+v.toFixed(3)} kWh`),
    series: [
      { value: (u, v) => xLabel(v, period) },
      { label: "Off-peak", stroke: c.hc, fill: c.hc, paths: bars(0.7), points: { show: false }, value: (u, v, s, i) => fmt(u, i == null ? null : hc[i]) },
      { label: "Peak", stroke: c.hp, fill: c.hp, paths: bars(0.7), points: { show: false }, value: fmt },
      { label: "Production", stroke: c.prod, width: 2, points: { show: true, size: 5 }, value: fmt },
    ],
  }, [x, total, hp, prod]);
}

function padRange(min, max, x) {
  const step = x.length > 1 ? x[1] - x[0] : 3600;
  return [min - step / 2, max + step / 2];
}

function xLabel(v, period) {
  if (v == null) return "–";
  const d = new Date(v * 1000);
  if (period === "day") return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (period === "year") return d.toLocaleDateString([], { month: "long", year: "numeric" });
  return d.toLocaleDateString();
}

function drawUsage(box, byUsage) {
  clear(box);
  if (!byUsage || !byUsage.submeters || !byUsage.submeters.length) {
    box.append(h("p", { class: "muted" }, "No submeter: equipments that measure their energy appear here."));
    return;
  }
  const totals = byUsage.totals || {};
  const rows = byUsage.submeters.map((s) =>
    h("tr", {}, h("td", {}, s.name), h("td", {}, kwh((totals.byEquipment || {})[s.id] || 0)), h("td", {}, euros((totals.costByEquipment || {})[s.id] || 0))));
  rows.push(h("tr", {}, h("td", {}, "Other"), h("td", {}, kwh(totals.other || 0)), h("td", {}, euros(totals.otherCost || 0))));
  box.append(h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Equipment"), h("th", {}, "Energy"), h("th", {}, "Cost"))), h("tbody", {}, rows)));
}
