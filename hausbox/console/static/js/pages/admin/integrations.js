// Integrations: status, and each one's settings (integration.<id>.<key> in the settings store)
// as a form built from the integration's own setting definitions. zigbee2mqtt is set up here by
// its broker URL; saving restarts the integration with the new settings.

import { get, put, post } from "../../api.js";
import { h, clear, field, errorBox } from "../../dom.js";
import { subscribe } from "../../live.js";

export async function render(main) {
  const list = h("div", { class: "stack" });
  main.append(h("h1", {}, "Integrations"), list);
  const draw = async () => {
    const integrations = await get("/integrations");
    clear(list);
    for (const integration of integrations) list.append(card(integration, draw));
  };
  await draw();
  // Connected, disconnected: the status badge follows without a reload.
  return subscribe(["system"], (event) => {
    if (event.type === "system.integration.connected" || event.type === "system.integration.disconnected") draw();
  });
}

function card(integration, redraw) {
  const error = errorBox();
  const inputs = {};
  const fields = (integration.settings || []).map((setting) => {
    const value = (integration.settingValues || {})[setting.key];
    let input;
    // A stored secret comes back masked: never put the mask in the field (saving would store it).
    if (setting.type === "password") input = h("input", { type: "password", autocomplete: "new-password", placeholder: value ? "unchanged" : "" });
    else if (setting.type === "boolean") input = h("input", { type: "checkbox", checked: value === true });
    else input = h("input", {
      type: setting.type === "number" ? "number" : "text",
      value: value ?? "", placeholder: setting.placeholder || "", step: setting.type === "number" ? "any" : false,
      autocomplete: "off",
    });
    input.name = setting.key;
    input.dataset.setting = `${integration.id}.${setting.key}`;
    inputs[setting.key] = { input, setting };
    return setting.type === "boolean"
      ? h("div", { class: "check" }, input, h("label", { for: (input.id = `s-${integration.id}-${setting.key}`) }, setting.label))
      : field(setting.label + (setting.required ? " *" : ""), input);
  });
  const form = h("form", { class: "card", dataset: { integration: integration.id } },
    h("header", { class: "row" }, h("h2", {}, integration.name), h("span", { class: "badge", dataset: { status: integration.status } }, integration.status),
      h("span", { class: "muted" }, `${integration.deviceCount} devices${integration.offlineDeviceCount ? `, ${integration.offlineDeviceCount} offline` : ""}`)),
    h("p", { class: "muted" }, integration.description || ""),
    fields, error,
    h("div", { class: "actions" },
      ["start", "stop", "restart"].map((action) => h("button", { type: "button", onclick: () => run(action) }, action[0].toUpperCase() + action.slice(1))),
      h("button", { type: "submit", class: "primary" }, "Save")));
  async function run(action) {
    try {
      await post(`/integrations/${integration.id}/${action}`);
      redraw();
    } catch (e) {
      error.show(e);
    }
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    const body = {};
    for (const [key, { input, setting }] of Object.entries(inputs)) {
      if (setting.type === "boolean") body[`integration.${integration.id}.${key}`] = input.checked;
      else if (input.value === "" && setting.type === "password") continue; // a blank password field keeps the stored one
      else body[`integration.${integration.id}.${key}`] = input.value === "" ? null : setting.type === "number" ? Number(input.value) : input.value;
    }
    try {
      await put("/settings", body);
      setTimeout(redraw, 500);
    } catch (e) {
      error.show(e);
    }
  });
  return form;
}
