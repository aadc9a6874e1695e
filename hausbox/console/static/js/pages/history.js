// History: one equipment's historized measure over a chosen window (GET /history/:id/:alias with
// from=-24h|-7d|-30d and aggregation auto), with its min/max band when the series is aggregated.
// The equipment and measure are in the address (?equipment=&alias=&from=) so a chart can be linked.

import { get } from "../api.js";
import { h, clear, field, errorBox } from "../dom.js";
import { t } from "../i18n.js";
import { chart, colors, seconds } from "../widgets/chart.js";

const WINDOWS = [["-24h", "24 hours"], ["-7d", "7 days"], ["-30d", "30 days"], ["-365d", "1 year"]];

export async function render(main) {
  const params = new URLSearchParams(location.search);
  const equipments = (await get("/equipments")).sort((a, b) => a.name.localeCompare(b.name));
  const error = errorBox();
  const equipmentSelect = h("select", { id: "history-equipment" }, equipments.map((e) => h("option", { value: e.id }, e.name)));
  const aliasSelect = h("select", { id: "history-alias" });
  const windowSelect = h("select", { id: "history-window" }, WINDOWS.map(([v, label]) => h("option", { value: v }, label)));
  const area = h("div", { class: "chart card", id: "history-chart" });
  const note = h("p", { class: "muted", id: "history-note", role: "status" });
  let plot = null;
  main.append(h("h1", {}, t("History")), error,
    h("div", { class: "row" }, field("Equipment", equipmentSelect), field("Measure", aliasSelect), field("Window", windowSelect)),
    note, area);
  if (!equipments.length) {
    note.textContent = "No equipment yet.";
    return;
  }
  equipmentSelect.value = params.get("equipment") || equipments[0].id;
  windowSelect.value = params.get("from") || "-24h";

  async function loadAliases() {
    clear(aliasSelect);
    const { aliases } = await get(`/history/${equipmentSelect.value}`);
    for (const alias of aliases) aliasSelect.append(h("option", { value: alias }, alias.replace(/_/g, " ")));
    const wanted = params.get("alias");
    if (wanted && aliases.includes(wanted)) aliasSelect.value = wanted;
    params.delete("alias");
  }

  async function draw() {
    error.show(null);
    if (plot) plot.dispose();
    plot = null;
    clear(area);
    const alias = aliasSelect.value;
    const address = `?equipment=${equipmentSelect.value}&alias=${encodeURIComponent(alias)}&from=${windowSelect.value}`;
    history.replaceState(null, "", `/history${alias ? address : ""}`);
    if (!alias) {
      note.textContent = "Nothing historized for this equipment yet.";
      main.dataset.loaded = "empty";
      return;
    }
    try {
      const series = await get(`/history/${equipmentSelect.value}/${encodeURIComponent(alias)}?from=${windowSelect.value}&aggregation=auto`);
      const points = series.points.filter((p) => typeof p.value === "number" || typeof p.value === "boolean");
      note.textContent = points.length ? `${points.length} points, ${series.resolution}` : "No value in this window.";
      if (points.length) {
        const c = colors();
        const x = points.map((p) => seconds(p.time));
        const y = points.map((p) => Number(p.value));
        const hasBand = points.some((p) => typeof p.min === "number");
        const seriesOptions = [{}, { label: alias, stroke: c.accent, width: 2, points: { show: points.length < 60 } }];
        const data = [x, y];
        if (hasBand) {
          seriesOptions.push({ label: "min", stroke: c.line, dash: [4, 4] }, { label: "max", stroke: c.line, dash: [4, 4] });
          data.push(points.map((p) => p.min ?? null), points.map((p) => p.max ?? null));
        }
        plot = chart(area, { height: 300, scales: { x: { time: true } }, series: seriesOptions }, data);
      }
      main.dataset.loaded = `${equipmentSelect.value}:${alias}`;
    } catch (e) {
      error.show(e);
    }
  }

  equipmentSelect.addEventListener("change", async () => { await loadAliases(); draw(); });
  aliasSelect.addEventListener("change", draw);
  windowSelect.addEventListener("change", draw);
  await loadAliases();
  await draw();
  return () => plot && plot.dispose();
}
