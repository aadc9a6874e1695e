// Devices and equipments: the devices the integrations found (rename, zone), an equipment created
// from devices (the server makes the bindings; GET /devices/suggest tells which devices fit the
// type), and each equipment's bindings, which can be removed or added by hand.

import { get, post, put, del } from "../../api.js";
import { h, clear, field, errorBox, formatValue } from "../../dom.js";
import { flatZones } from "./zones.js";

// The engine's equipment types (hausbox/equipments/types.py).
const TYPES = ["light_onoff", "light_dimmable", "light_color", "switch", "sensor", "button", "thermostat", "heater", "shutter", "awning",
  "gate", "weather", "weather_forecast", "media_player", "appliance", "energy_meter", "main_energy_meter", "energy_production_meter",
  "solar_panel", "ups", "water_valve", "water_heater", "pool_pump", "pool_cover", "pool_heat_pump", "display", "camera", "vmc"];

export async function render(main) {
  const error = errorBox();
  const devicesBox = h("div", { class: "table-wrap", id: "devices" });
  const equipmentsBox = h("div", { id: "equipments" });
  const createBox = h("div", {});
  main.append(h("h1", {}, "Devices and equipments"), error, h("h2", {}, "New equipment"), createBox,
    h("h2", {}, "Equipments"), equipmentsBox, h("h2", {}, "Devices"), devicesBox);

  async function draw() {
    const [devices, equipments, zones] = await Promise.all([get("/devices"), get("/equipments"), get("/zones")]);
    const zoneList = flatZones(zones);
    drawDevices(devicesBox, devices, zoneList, error);
    drawEquipments(equipmentsBox, equipments, devices, error, draw);
    drawCreate(createBox, devices, zoneList, error, draw);
  }
  await draw();
}

function zoneSelect(zoneList, selected, none) {
  return h("select", {}, none ? h("option", { value: "" }, none) : null, zoneList.map((z) => h("option", { value: z.id, selected: z.id === selected }, z.label)));
}

function drawDevices(box, devices, zoneList, error) {
  clear(box);
  if (!devices.length) return box.append(h("p", { class: "muted" }, "No device yet: set up an integration first."));
  const rows = devices.sort((a, b) => a.name.localeCompare(b.name)).map((d) => {
    const name = h("input", { value: d.name, "aria-label": `Name of ${d.name}` });
    const zone = zoneSelect(zoneList, d.zoneId, "—");
    zone.setAttribute("aria-label", `Zone of ${d.name}`);
    const save = async () => {
      try {
        await put(`/devices/${d.id}`, { name: name.value, zoneId: zone.value || null });
      } catch (e) {
        error.show(e);
      }
    };
    name.addEventListener("change", save);
    zone.addEventListener("change", save);
    return h("tr", { dataset: { deviceId: d.id } }, h("td", {}, name), h("td", {}, d.integrationId), h("td", {}, d.model || ""),
      h("td", {}, h("span", { class: "badge", dataset: { status: d.status } }, d.status)), h("td", {}, zone));
  });
  box.append(h("table", {}, h("thead", {}, h("tr", {}, ["Name", "Integration", "Model", "Status", "Zone"].map((c) => h("th", {}, c)))), h("tbody", {}, rows)));
}

function drawCreate(box, devices, zoneList, error, redraw) {
  clear(box);
  const name = h("input", { id: "new-equipment-name", required: true });
  const type = h("select", { id: "new-equipment-type" }, TYPES.map((t) => h("option", { value: t }, t.replace(/_/g, " "))));
  const zone = zoneSelect(zoneList);
  zone.id = "new-equipment-zone";
  const choices = h("fieldset", { class: "device-choices", id: "new-equipment-devices" }, h("legend", {}, "Devices"));
  const fill = async () => {
    // Devices that fit the type first (the server's suggestion), then the others.
    const suggested = await get(`/devices/suggest?type=${type.value}`).catch(() => []);
    const fit = new Set(suggested.map((s) => s.device.id));
    clear(choices).append(h("legend", {}, "Devices"));
    const sorted = [...devices].sort((a, b) => (fit.has(b.id) - fit.has(a.id)) || a.name.localeCompare(b.name));
    for (const d of sorted) {
      const id = `pick-${d.id}`;
      choices.append(h("div", { class: "check" }, h("input", { type: "checkbox", id, value: d.id, dataset: { deviceName: d.name } }),
        h("label", { for: id }, d.name, fit.has(d.id) ? h("span", { class: "muted" }, " (fits)") : null)));
    }
  };
  type.addEventListener("change", fill);
  const form = h("form", { class: "card", id: "new-equipment" },
    h("div", { class: "row" }, field("Name", name), field("Type", type), field("Zone", zone)), choices,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    const deviceIds = [...choices.querySelectorAll("input:checked")].map((i) => i.value);
    try {
      await post("/equipments", { name: name.value.trim(), type: type.value, zoneId: zone.value, deviceIds });
      await redraw();
    } catch (e) {
      error.show(e);
    }
  });
  box.append(form);
  fill();
}

function drawEquipments(box, equipments, devices, error, redraw) {
  clear(box);
  if (!equipments.length) return box.append(h("p", { class: "muted" }, "No equipment yet."));
  for (const e of equipments.sort((a, b) => a.name.localeCompare(b.name))) {
    const act = (promise) => promise.then(redraw, (err) => error.show(err));
    const bindingRows = [
      ...(e.dataBindings || []).map((b) => ["data", b, `${b.deviceName}.${b.key}`, formatValue(b.value, b.unit)]),
      ...(e.orderBindings || []).map((b) => ["order", b, `${b.deviceName}.${b.key}`, "order"]),
    ].map(([kind, b, source, value]) => h("tr", {}, h("td", {}, b.alias), h("td", {}, source), h("td", {}, value),
      h("td", {}, h("button", { type: "button", class: "link danger", onclick: () => act(del(`/equipments/${e.id}/${kind}-bindings/${b.id}`)) }, "remove"))));
    box.append(h("details", { class: "card", dataset: { equipmentId: e.id } },
      h("summary", {}, `${e.name} (${e.type.replace(/_/g, " ")})`),
      h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Alias", "Device", "Value", ""].map((c) => h("th", {}, c)))), h("tbody", {}, bindingRows))),
      addBinding(e, devices, act),
      h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: () => confirm(`Delete ${e.name}?`) && act(del(`/equipments/${e.id}`)) }, "Delete equipment"))));
  }
}

// A binding by hand: any device measure or order, under an alias of the admin's choosing.
function addBinding(equipment, devices, act) {
  const source = h("select", { "aria-label": "Device measure or order" });
  for (const d of devices) {
    for (const data of d.data || []) source.append(h("option", { value: `data:${data.id}` }, `${d.name}: ${data.key}`));
    for (const order of d.orders || []) source.append(h("option", { value: `order:${order.id}` }, `${d.name}: ${order.key} (order)`));
  }
  const alias = h("input", { "aria-label": "Alias", placeholder: "alias", required: true });
  const form = h("form", { class: "row" }, source, alias, h("button", { type: "submit" }, "Add binding"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const [kind, id] = source.value.split(":");
    const body = kind === "data" ? { deviceDataId: id, alias: alias.value.trim() } : { deviceOrderId: id, alias: alias.value.trim() };
    act(post(`/equipments/${equipment.id}/${kind}-bindings`, body));
  });
  return form;
}
