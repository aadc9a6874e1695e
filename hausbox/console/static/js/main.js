// The console's entry point: decides between set-up, sign-in and the signed-in pages, and routes
// paths (history API; the server answers every page path with index.html) to page modules.

import { get, publicGet, currentSession, onSession, signOut } from "./api.js";
import { h, clear } from "./dom.js";
import { t, setLanguage, browserLanguage } from "./i18n.js";
import { connect, disconnect, onStatus } from "./live.js";

// path -> page module (loaded when first visited, so the home page does not wait for the charts).
const PAGES = [
  { path: "/", label: "Home", load: () => import("./pages/home.js") },
  { path: "/energy", label: "Energy", load: () => import("./pages/energy.js") },
  { path: "/history", label: "History", load: () => import("./pages/history.js") },
  { path: "/account", label: "My account", hidden: true, load: () => import("./pages/account.js") },
  { path: "/admin", label: "Administration", admin: true, prefix: true, load: () => import("./pages/admin/index.js") },
];

const app = document.getElementById("app");
let me = null;
let cleanup = null;
let moved = false; // a page change by a link: keyboard and screen reader users start at the new content

export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else {
    history.pushState(null, "", path);
    moved = true;
  }
  route();
}

// Links inside the console change the page without a reload (middle-click and new tabs still work).
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a[href^='/']");
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || link.target) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", () => route());
onSession((session) => {
  if (!session && me) {
    me = null;
    disconnect();
    navigate("/signin", true);
  }
});

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  app.dataset.state = "loading";
  const path = location.pathname;
  const status = await publicGet("/auth/status").catch(() => ({ setupRequired: false }));
  if (status.setupRequired) return show(path === "/setup" ? null : "/setup", () => import("./pages/setup.js"));
  if (!currentSession()) {
    setLanguage(browserLanguage());
    return show(path === "/signin" ? null : "/signin", () => import("./pages/signin.js"));
  }
  if (path === "/signin" || path === "/setup") return navigate("/", true);
  if (!me) {
    try {
      me = await get("/me");
    } catch {
      me = null;
      return; // the session listener sends the user to sign-in
    }
    setLanguage((me.preferences && me.preferences.language) || browserLanguage());
    connect();
  }
  const page = PAGES.find((p) => (p.prefix ? path === p.path || path.startsWith(p.path + "/") : path === p.path));
  const main = layout(page);
  if (!page) {
    main.append(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "/" }, t("Home"))));
  } else if (page.admin && me.role !== "admin") {
    main.append(h("h1", {}, "Not allowed"), h("p", {}, "This page is for administrators."));
  } else {
    const module = await page.load();
    cleanup = (await module.render(main, { me, navigate, path })) || null;
  }
  if (moved) main.focus();
  moved = false;
  app.dataset.state = "ready"; // the page has its data: what the browser tests wait for
}

// A page without the signed-in frame (set-up, sign-in).
async function show(redirect, load) {
  if (redirect) history.replaceState(null, "", redirect);
  clear(app);
  app.dataset.state = "public";
  const main = h("main", { id: "main", class: "narrow", tabindex: "-1" });
  app.append(main);
  const module = await load();
  cleanup = (await module.render(main, { navigate, done: () => route() })) || null;
  app.dataset.state = "ready";
}

function layout(current) {
  clear(app);
  const links = PAGES.filter((p) => !p.hidden && (!p.admin || me.role === "admin")).map((p) =>
    h("a", { href: p.path, class: "nav-link", "aria-current": p === current ? "page" : false, dataset: { nav: p.path } }, t(p.label)),
  );
  const dot = h("span", { class: "live-dot", role: "status", title: "Live updates" });
  onStatus((s) => {
    dot.dataset.status = s;
    dot.setAttribute("aria-label", `Live updates: ${s}`);
  });
  const header = h(
    "header",
    { class: "top" },
    h("a", { href: "/", class: "brand" }, h("img", { src: document.querySelector("link[rel=icon]").href, alt: "", width: 24, height: 24 }), "hausbox"),
    h("nav", { "aria-label": "Main" }, links),
    h("div", { class: "who" }, dot, h("a", { href: "/account", class: "muted", id: "whoami", title: "My account" }, me.displayName || me.username),
      h("button", { type: "button", class: "ghost", id: "signout", onclick: () => signOut() }, t("Sign out"))),
  );
  const main = h("main", { id: "main", tabindex: "-1" });
  app.append(header, main);
  app.dataset.state = "loading";
  return main;
}

route();
