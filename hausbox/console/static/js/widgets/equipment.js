// One equipment's card: its live values, its orders (built from its order bindings: a button per
// value of an enum order, a slider for a numeric one; the VMC's virtual speed order), its timed
// action with a countdown, and a 24 h sparkline of its main measure.

import { post, del, get } from "../api.js";
import { h, clear, formatValue } from "../dom.js";
import { t } from "../i18n.js";
import { sparkline } from "./sparkline.js";

const LABELS = { ON: "On", OFF: "Off", OPEN: "Open", CLOSE: "Close", STOP: "Stop", off: "Off", v1: "Speed 1", v2: "Speed 2" };
const HIDDEN_VALUES = new Set(["TOGGLE"]);
// Orders a person uses daily; a device's other settings (effects, power-on behaviour) go under "More".
const MAIN_ORDERS = new Set(["light_toggle", "toggle_power", "value_toggle", "valve_toggle", "shutter_move", "set_shutter_position",
  "set_setpoint", "set_brightness", "set_operation_mode"]);
const NOISE = new Set(["generic", "linkquality", "link_quality"]);
const SPARK_ALIASES = ["power", "temperature", "local_temperature", "humidity"];

export class EquipmentCard {
  constructor(equipment, { onError }) {
    this.equipment = equipment;
    this.onError = onError;
    this.units = Object.fromEntries((equipment.dataBindings || []).map((b) => [b.alias, b.unit]));
    this.values = new Map(); // alias -> <dd>
    this.controls = []; // (data) -> void: keep order controls in step with the data
    this.el = h("article", { class: "card equipment", dataset: { equipmentId: equipment.id, type: equipment.type }, "aria-label": equipment.name });
    this.render();
  }

  render() {
    const e = this.equipment;
    clear(this.el);
    this.values.clear();
    const data = e.data || {};
    // The measures that matter on top; the rest (link quality, device settings) one click away.
    const categories = Object.fromEntries((e.dataBindings || []).map((b) => [b.alias, b.category]));
    const main = h("dl", { class: "values" });
    const rest = h("dl", { class: "values" });
    for (const alias of Object.keys(data).sort()) {
      const dd = h("dd", { dataset: { alias } }, formatValue(data[alias], this.units[alias]));
      this.values.set(alias, dd);
      const row = h("div", {}, h("dt", {}, alias.replace(/_/g, " ")), dd);
      (isMainValue(alias, categories[alias]) ? main : rest).append(row);
    }
    this.timed = h("div", { class: "timed", role: "status" });
    this.el.append(
      h("header", {}, h("h3", {}, e.name), h("span", { class: "muted" }, e.type.replace(/_/g, " "))),
      main,
      this.orders(),
      this.timed,
      rest.children.length ? h("details", {}, h("summary", {}, "All values"), rest) : null,
    );
    this.renderTimed();
    this.loadSparkline();
  }

  orders() {
    const e = this.equipment;
    const box = h("div", { class: "orders" });
    const more = h("div", { class: "orders" });
    this.controls = [];
    if (e.type === "vmc") {
      box.append(this.enumRow("speed", ["off", "v1", "v2"], () => vmcSpeed(this.equipment.data || {})));
    }
    const seen = new Set();
    for (const binding of e.orderBindings || []) {
      if (seen.has(binding.alias) || (e.type === "vmc" && (binding.alias === "low" || binding.alias === "high"))) continue;
      seen.add(binding.alias);
      const target = MAIN_ORDERS.has(binding.category) ? box : more;
      if (binding.type === "enum" && binding.enumValues) {
        target.append(this.enumRow(binding.alias, binding.enumValues.filter((v) => !HIDDEN_VALUES.has(v)), (data) => data[binding.alias]));
      } else if (binding.type === "number") {
        target.append(this.numberRow(binding));
      } else if (binding.type === "boolean") {
        target.append(this.enumRow(binding.alias, [true, false], (data) => data[binding.alias]));
      }
    }
    if (more.children.length) box.append(h("details", {}, h("summary", {}, "More orders"), more));
    if (e.timedCommand) {
      const minutes = Math.round(e.timedCommand.durationMs / 60000);
      box.append(h("div", { class: "order-row" }, h("button", { type: "button", dataset: { timed: "arm" }, onclick: () => this.armTimed() },
        `${LABELS[e.timedCommand.value] || e.timedCommand.value} for ${minutes} min`)));
    }
    return box;
  }

  enumRow(alias, values, current) {
    const buttons = values.map((value) =>
      h("button", { type: "button", dataset: { order: alias, value: String(value) }, onclick: () => this.send(alias, value) }, t(LABELS[value] || String(value))));
    const sync = (data) => {
      const now = current(data);
      for (const button of buttons) button.setAttribute("aria-pressed", String(String(now) === button.dataset.value));
    };
    sync(this.equipment.data || {});
    this.controls.push(sync);
    return h("div", { class: "order-row", role: "group", "aria-label": alias }, h("label", {}, alias.replace(/_/g, " ")), buttons);
  }

  numberRow(binding) {
    const alias = binding.alias;
    const min = binding.min ?? 0;
    const max = binding.max ?? 100;
    const step = binding.category === "set_setpoint" ? 0.5 : 1;
    const input = h("input", { type: "range", min, max, step, dataset: { order: alias }, "aria-label": `${this.equipment.name} ${alias}` });
    const output = h("output", {});
    const sync = (data) => {
      // The measure bound under the same alias shows where it is; none yet: no number to claim.
      const value = data[alias];
      if (typeof value === "number" && document.activeElement !== input) input.value = String(value);
      output.textContent = typeof value === "number" || input.dataset.moved ? formatValue(Number(input.value), this.units[alias]) : "–";
    };
    input.addEventListener("input", () => (input.dataset.moved = "1"));
    input.addEventListener("input", () => (output.textContent = formatValue(Number(input.value), this.units[alias])));
    input.addEventListener("change", () => this.send(alias, Number(input.value)));
    sync(this.equipment.data || {});
    this.controls.push(sync);
    const id = `o-${this.equipment.id}-${alias}`;
    input.id = id;
    return h("div", { class: "order-row" }, h("label", { for: id }, alias.replace(/_/g, " ")), input, output);
  }

  async send(alias, value) {
    try {
      await post(`/equipments/${this.equipment.id}/orders/${encodeURIComponent(alias)}`, { value });
    } catch (error) {
      this.onError(`${this.equipment.name}: ${error.message}`);
    }
  }

  // A live value: the one place data changes on the card (WebSocket equipment.data.changed).
  update(alias, value) {
    const data = (this.equipment.data = { ...(this.equipment.data || {}), [alias]: value });
    const dd = this.values.get(alias);
    if (dd) {
      dd.textContent = formatValue(value, this.units[alias]);
    } else this.render();
    for (const sync of this.controls) sync(data);
  }

  replace(equipment) {
    this.equipment = equipment;
    this.units = Object.fromEntries((equipment.dataBindings || []).map((b) => [b.alias, b.unit]));
    this.render();
  }

  async armTimed() {
    try {
      const armed = await post(`/equipments/${this.equipment.id}/timed-action`, {});
      this.equipment.timedAction = armed.disarmed ? null : armed;
      this.renderTimed();
    } catch (error) {
      this.onError(`${this.equipment.name}: ${error.message}`);
    }
  }

  async cancelTimed(revert) {
    try {
      await del(`/equipments/${this.equipment.id}/timed-action${revert ? "?revert=true" : ""}`);
    } catch (error) {
      if (error.status !== 404) this.onError(`${this.equipment.name}: ${error.message}`);
    }
    this.equipment.timedAction = null;
    this.renderTimed();
  }

  // The countdown of an armed timed action, ticking every second until it expires.
  renderTimed() {
    clearInterval(this.tick);
    clear(this.timed);
    const action = this.equipment.timedAction;
    if (!action || !action.expiresAt) return;
    const until = Date.parse(action.expiresAt);
    const text = h("span", { dataset: { countdown: "" } });
    const draw = () => {
      const left = Math.max(0, Math.round((until - Date.now()) / 1000));
      text.textContent = `Back to ${LABELS[action.revertValue] || action.revertValue} in ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
      if (left === 0) clearInterval(this.tick);
    };
    draw();
    this.tick = setInterval(draw, 1000);
    this.timed.append(text, " ",
      h("button", { type: "button", class: "link", onclick: () => this.cancelTimed(true) }, "revert now"), " ",
      h("button", { type: "button", class: "link", onclick: () => this.cancelTimed(false) }, "keep"));
  }

  async loadSparkline() {
    const alias = SPARK_ALIASES.find((a) => typeof (this.equipment.data || {})[a] === "number");
    if (!alias) return;
    try {
      const body = await get(`/history/sparkline/${this.equipment.id}/${alias}`);
      if (!body.values || !body.values.length) return;
      // The sparkline opens the full chart of the same measure.
      this.el.append(h("a", { href: `/history?equipment=${this.equipment.id}&alias=${alias}`, class: "spark-link", dataset: { sparkline: alias } },
        sparkline(body.values, `${alias}, last 24 hours: open the history`)));
    } catch {
      /* no history for this measure: no sparkline */
    }
  }

  destroy() {
    clearInterval(this.tick);
  }
}

// By category only, so that a value arriving later does not move on the card.
function isMainValue(alias, category) {
  return Boolean(category) && !NOISE.has(category) && alias !== "linkquality";
}

// The VMC's speed from its relays: high on is v2, low on is v1 (break-before-make keeps one at a time).
function vmcSpeed(data) {
  if (data.high === "ON" || data.high === true) return "v2";
  if (data.low === "ON" || data.low === true) return "v1";
  return "off";
}
