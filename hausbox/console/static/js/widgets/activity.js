// Activity items as sentences: the feed stores a template key and its parameters, the client words them.

function name(params, key) {
  return params[key] || "";
}

const SENTENCES = {
  "order.executed": (p) => `${name(p, "equipmentName")}: ${p.alias} → ${p.value}`,
  "order.failed": (p) => `${name(p, "equipmentName")}: ${p.alias} → ${p.value} failed`,
  "motion.detected": (p) => `Motion in ${name(p, "zoneName") || "a zone"}`,
  "motion.cleared": (p) => `No more motion in ${name(p, "zoneName") || "a zone"}`,
  "mode.activated": (p) => `Mode ${name(p, "modeName")} on`,
  "mode.deactivated": (p) => `Mode ${name(p, "modeName")} off`,
};

export function sentence(item) {
  const { template, params = {} } = item.message || {};
  const make = SENTENCES[template];
  if (make) return make(params);
  const detail = params.message || params.recipeName || params.name || params.equipmentName || "";
  return detail ? `${template}: ${detail}` : template;
}

export function time(item) {
  return new Date(item.timestamp).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}
