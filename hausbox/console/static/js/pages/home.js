// The home: the zone tree with each zone's aggregated values and orders, the equipments inside it
// (cards with live data and orders), the modes and the activity feed, all kept live over the
// WebSocket (topics equipments, zones, modes, activity).

import { get, post } from "../api.js";
import { h, clear, errorBox, formatValue } from "../dom.js";
import { t } from "../i18n.js";
import { subscribe } from "../live.js";
import { EquipmentCard } from "../widgets/equipment.js";
import { sentence, time } from "../widgets/activity.js";

const ZONE_ORDERS = [
  ["lightsTotal", [["allLightsOn", "All lights on"], ["allLightsOff", "All lights off"]]],
  ["shuttersTotal", [["allShuttersOpen", "Open shutters"], ["allShuttersClose", "Close shutters"]]],
];
const FEED_LENGTH = 50;

export async function render(main, { me }) {
  const [zones, aggregation, equipments, modes, activity] = await Promise.all([
    get("/zones"), get("/zones/aggregation"), get("/equipments"), get("/modes"), get("/activity?limit=30"),
  ]);
  const error = errorBox();
  const cards = new Map(); // equipment id -> EquipmentCard
  const chips = new Map(); // zone id -> aggregates element
  const byZone = groupBy(equipments, (e) => e.zoneId);

  function zoneSection(zone, depth) {
    const aggregates = h("div", { class: "aggregates", dataset: { zoneAggregates: zone.id } });
    chips.set(zone.id, aggregates);
    fillAggregates(aggregates, aggregation[zone.id] || {});
    const orders = h("div", { class: "row" });
    fillZoneOrders(orders, zone, aggregation[zone.id] || {});
    const items = (byZone.get(zone.id) || []).map((e) => {
      const card = new EquipmentCard(e, { onError: (m) => error.show(m) });
      cards.set(e.id, card);
      return card.el;
    });
    const heading = h(depth === 0 ? "h2" : "h3", { id: `zone-${zone.id}` }, zone.name);
    return h("section", { class: "zone", dataset: { zoneId: zone.id }, "aria-labelledby": `zone-${zone.id}` },
      h("div", { class: "zone-head" }, heading, aggregates, orders),
      items.length ? h("div", { class: "equipments" }, items) : null,
      (zone.children || []).map((child) => zoneSection(child, depth + 1)));
  }

  function fillZoneOrders(box, zone, data) {
    clear(box);
    for (const [count, orders] of ZONE_ORDERS) {
      if (!data[count]) continue;
      for (const [key, label] of orders) {
        box.append(h("button", { type: "button", dataset: { zoneOrder: key }, onclick: () => zoneOrder(zone, key) }, label));
      }
    }
  }

  async function zoneOrder(zone, key) {
    try {
      await post(`/zones/${zone.id}/orders/${key}`, {});
    } catch (e) {
      error.show(`${zone.name}: ${e.message}`);
    }
  }

  const tree = h("div", { class: "zones" }, zones.map((z) => zoneSection(z, 0)));
  if (!equipments.length) {
    tree.prepend(h("p", { class: "card muted" }, me.role === "admin"
      ? ["No equipment yet. ", h("a", { href: "/admin/devices" }, "Create one from a device"), "."]
      : "No equipment yet: an administrator creates them."));
  }

  // modes
  const modeList = h("div", { class: "modes" });
  const modeById = new Map(modes.map((m) => [m.id, m]));
  function drawModes() {
    clear(modeList);
    if (!modeById.size) modeList.append(h("p", { class: "muted" }, "No modes."));
    for (const mode of modeById.values()) {
      const active = isActive(mode);
      modeList.append(h("div", { class: "mode", dataset: { modeId: mode.id } },
        h("span", {}, mode.name),
        h("button", { type: "button", "aria-pressed": String(active), onclick: () => toggleMode(mode, active) }, active ? t("Deactivate") : t("Activate"))));
    }
  }
  async function toggleMode(mode, active) {
    try {
      await post(`/modes/${mode.id}/${active ? "deactivate" : "activate"}`);
      modeById.set(mode.id, await get(`/modes/${mode.id}`));
      drawModes();
    } catch (e) {
      error.show(`${mode.name}: ${e.message}`);
    }
  }
  drawModes();

  // activity
  const feed = h("ol", { class: "feed", id: "activity", "aria-live": "polite" });
  const addItem = (item, atTop) => {
    const li = h("li", { dataset: { category: item.category } }, h("time", {}, time(item)), sentence(item));
    if (atTop) feed.prepend(li);
    else feed.append(li);
    while (feed.children.length > FEED_LENGTH) feed.lastChild.remove();
  };
  for (const item of activity.items) addItem(item, false);
  if (!activity.items.length) feed.append(h("li", { class: "muted" }, "Nothing yet."));

  main.append(h("h1", { class: "visually-hidden" }, t("Home")), error,
    h("div", { class: "home" }, tree,
      h("aside", { class: "side" },
        h("section", { class: "card", "aria-labelledby": "modes-title" }, h("h2", { id: "modes-title" }, t("Modes")), modeList),
        h("section", { class: "card", "aria-labelledby": "activity-title" }, h("h2", { id: "activity-title" }, t("Activity")), feed))));

  const unsubscribe = subscribe(["equipments", "zones", "modes", "activity"], (event) => {
    switch (event.type) {
      case "equipment.data.changed": {
        const card = cards.get(event.equipmentId);
        if (card) card.update(event.alias, event.value);
        break;
      }
      case "zone.data.changed": {
        const box = chips.get(event.zoneId);
        if (box && event.aggregatedData) {
          aggregation[event.zoneId] = event.aggregatedData;
          fillAggregates(box, event.aggregatedData);
        }
        break;
      }
      case "equipment.updated": {
        const card = event.equipment && cards.get(event.equipment.id);
        if (card && event.equipment.zoneId === card.equipment.zoneId) card.replace(event.equipment);
        break;
      }
      case "mode.activated":
      case "mode.deactivated":
      case "mode.updated":
      case "mode.created": {
        const id = event.modeId || (event.mode && event.mode.id);
        if (id) get(`/modes/${id}`).then((m) => { modeById.set(m.id, m); drawModes(); }, () => {});
        break;
      }
      case "mode.removed":
        modeById.delete(event.modeId);
        drawModes();
        break;
      case "activity.added":
        if (feed.firstChild && feed.firstChild.classList.contains("muted")) feed.firstChild.remove();
        addItem(event.item, true);
        break;
    }
  });
  return () => {
    unsubscribe();
    for (const card of cards.values()) card.destroy();
  };
}

function isActive(mode) {
  return mode.active === true || mode.state === "active" || mode.isActive === true;
}

// The aggregates worth showing: a chip each, only for what the zone has.
function fillAggregates(box, d) {
  clear(box);
  const chip = (key, text, active) => box.append(h("span", { class: "chip", dataset: { key, active: String(!!active) } }, text));
  if (typeof d.temperature === "number") chip("temperature", formatValue(d.temperature, "°C"));
  if (typeof d.humidity === "number") chip("humidity", formatValue(d.humidity, "%"));
  if (d.motionSensors) chip("motion", d.motion ? "Motion" : "No motion", d.motion);
  if (d.lightsTotal) chip("lightsOn", `Lights ${d.lightsOn}/${d.lightsTotal}`, d.lightsOn > 0);
  if (d.shuttersTotal) chip("shuttersOpen", `Shutters open ${d.shuttersOpen}/${d.shuttersTotal}`);
  if (typeof d.power === "number") chip("power", formatValue(d.power, "W"));
  if (d.waterLeak) chip("waterLeak", "Water leak!", true);
  if (d.smoke) chip("smoke", "Smoke!", true);
}

function groupBy(items, key) {
  const map = new Map();
  for (const item of items) {
    const k = key(item);
    if (!map.has(k)) map.set(k, []);
    map.get(k).push(item);
  }
  return map;
}
