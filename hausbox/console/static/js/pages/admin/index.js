// Administration (admins only: the nav hides it from standard users, main.js refuses the page, and
// the API answers 403 anyway). One sub-page per concern, each its own module.

import { h } from "../../dom.js";

const SECTIONS = [
  ["integrations", "Integrations", () => import("./integrations.js")],
  ["devices", "Devices and equipments", () => import("./devices.js")],
  ["users", "Users and tokens", () => import("./users.js")],
  ["backup", "Backups", () => import("./backup.js")],
  ["system", "Update", () => import("./system.js")],
  ["logs", "Logs", () => import("./logs.js")],
  ["settings", "Settings", () => import("./settings.js")],
];

export async function render(main, context) {
  const name = context.path.split("/")[2] || "integrations";
  const section = SECTIONS.find(([key]) => key === name);
  const content = h("div", { class: "admin-content" });
  main.append(h("div", { class: "admin" },
    h("nav", { "aria-label": "Administration" },
      SECTIONS.map(([key, label]) => h("a", { href: `/admin/${key}`, class: "nav-link", "aria-current": key === name ? "page" : false }, label))),
    content));
  if (!section) {
    content.append(h("h1", {}, "Not found"));
    return null;
  }
  const module = await section[2]();
  return module.render(content, context);
}
