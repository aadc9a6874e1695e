// Settings: the home's location (time zone, sunrise) and every key of the settings store, each
// editable as JSON (the store is flat: key -> value). Integration settings have their own page.

import { get, put } from "../../api.js";
import { h, clear, field, errorBox } from "../../dom.js";

export async function render(main) {
  const error = errorBox();
  const status = h("p", { role: "status", id: "settings-status" });
  const table = h("div", { class: "table-wrap", id: "settings" });
  main.append(h("h1", {}, "Settings"), error, status, table, addForm());

  async function save(body) {
    error.show(null);
    try {
      await put("/settings", body);
      status.textContent = `Saved ${Object.keys(body).join(", ")}.`;
      await draw();
    } catch (e) {
      error.show(e);
    }
  }

  async function draw() {
    const settings = await get("/settings");
    clear(table);
    const keys = Object.keys(settings).filter((k) => !k.startsWith("integration.")).sort();
    const rows = keys.map((key) => {
      const input = h("input", { value: JSON.stringify(settings[key]), "aria-label": key, dataset: { key } });
      const form = h("form", { class: "row" }, input, h("button", { type: "submit" }, "Save"));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        let value;
        try {
          value = JSON.parse(input.value);
        } catch {
          return error.show(`${key}: not valid JSON (a text needs quotes)`);
        }
        save({ [key]: value });
      });
      return h("tr", {}, h("td", {}, h("code", {}, key)), h("td", {}, form));
    });
    table.append(h("table", {}, h("tbody", {}, rows)));
  }

  function addForm() {
    const key = h("input", { id: "setting-key", required: true, placeholder: "home.latitude" });
    const value = h("input", { id: "setting-value", required: true, placeholder: "48.85" });
    const form = h("form", { class: "card" }, h("h2", {}, "Set a key"), h("div", { class: "row" }, field("Key", key), field("Value (JSON)", value)),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      let parsed;
      try {
        parsed = JSON.parse(value.value);
      } catch {
        parsed = value.value; // a bare word is taken as text
      }
      save({ [key.value.trim()]: parsed });
    });
    return form;
  }

  await draw();
}
