// The zone tree flattened for a <select>: "Home / Floor / Room" labels, in tree order.

export function flatZones(tree, prefix = "") {
  const out = [];
  for (const zone of tree) {
    const label = prefix ? `${prefix} / ${zone.name}` : zone.name;
    out.push({ id: zone.id, label });
    out.push(...flatZones(zone.children || [], label));
  }
  return out;
}
