// Logs: the ring buffer (GET /logs) and then every new entry live (WebSocket topic "logs"), with a
// level filter and the runtime level of the buffer (PUT /logs/level).

import { get, put } from "../../api.js";
import { h, clear, field, errorBox } from "../../dom.js";
import { subscribe } from "../../live.js";

const LEVELS = ["debug", "info", "warn", "error", "fatal"];
const KEEP = 500;

export async function render(main) {
  const error = errorBox();
  const filter = h("select", { id: "logs-filter" }, LEVELS.map((l) => h("option", { value: l }, l)));
  const level = h("select", { id: "logs-level" }, [...LEVELS, "silent"].map((l) => h("option", { value: l }, l)));
  const list = h("div", { class: "logs card", id: "logs", role: "log" });
  main.append(h("h1", {}, "Logs"), error, h("div", { class: "row" }, field("Show from", filter), field("Buffer level", level)), list);
  const body = await get("/logs?limit=200");
  level.value = body.currentLevel;
  filter.value = "info";
  const entries = [...body.entries];
  const line = (e) => h("div", { dataset: { level: e.level } }, `${e.time.slice(11, 19)} ${e.level.padEnd(5)} [${e.module}] ${e.msg}`);
  const draw = () => {
    clear(list);
    const min = LEVELS.indexOf(filter.value);
    for (const e of entries) if (LEVELS.indexOf(e.level) >= min) list.append(line(e));
    list.scrollTop = list.scrollHeight;
  };
  filter.addEventListener("change", draw);
  level.addEventListener("change", () => put("/logs/level", { level: level.value }).catch((e) => error.show(e)));
  draw();
  return subscribe(["logs"], (event) => {
    if (event.type !== "log.entry") return;
    entries.push(event);
    if (entries.length > KEEP) entries.shift();
    if (LEVELS.indexOf(event.level) >= LEVELS.indexOf(filter.value)) {
      const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
      list.append(line(event));
      if (list.children.length > KEEP) list.firstChild.remove();
      if (atBottom) list.scrollTop = list.scrollHeight;
    }
  });
}
