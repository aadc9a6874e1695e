// Update and restart: this version and the latest release (GET /system/version), a forced check,
// the self-update (POST /system/update) with its progress events, and a restart. Where the box
// cannot update or restart itself, the buttons are off and the server's reason is shown.

import { get, post } from "../../api.js";
import { h, clear, errorBox } from "../../dom.js";
import { subscribe } from "../../live.js";

export async function render(main) {
  const error = errorBox();
  const box = h("div", { class: "card", id: "version" });
  const progress = h("ol", { class: "feed", id: "update-progress", "aria-live": "polite" });
  main.append(h("h1", {}, "Update"), error, box, progress);

  async function draw(info) {
    info = info || (await get("/system/version"));
    clear(box);
    const update = h("button", { type: "button", class: "primary", id: "update-start", disabled: !info.updateAvailable || !info.selfUpdate.enabled || info.update.running }, "Update now");
    update.addEventListener("click", () => act(() => post("/system/update")));
    const restart = h("button", { type: "button", id: "restart", disabled: !info.restart.enabled }, "Restart");
    restart.addEventListener("click", () => confirm("Restart the box now?") && act(() => post("/system/restart")));
    const check = h("button", { type: "button", id: "update-check" }, "Check now");
    check.addEventListener("click", () => act(async () => draw(await post("/system/version/check"))));
    box.append(
      h("p", {}, "This version: ", h("strong", { id: "version-current" }, info.current)),
      h("p", {}, "Latest release: ", info.latest || "unknown", info.updateAvailable ? " (update available)" : "",
        info.releaseUrl ? [" — ", h("a", { href: info.releaseUrl, rel: "noreferrer", target: "_blank" }, "release notes")] : null),
      info.lastError ? h("p", { class: "muted" }, `Last check: ${info.lastError}`) : null,
      info.selfUpdate.enabled ? null : h("p", { class: "muted", id: "update-reason" }, `Self-update is off: ${info.selfUpdate.reason}`),
      info.restart.enabled ? null : h("p", { class: "muted" }, `Restart: ${info.restart.reason}`),
      info.update.running ? h("p", {}, `Updating: ${info.update.step || ""} ${info.update.message || ""}`) : null,
      h("div", { class: "actions" }, check, restart, update));
  }
  async function act(run) {
    error.show(null);
    try {
      await run();
    } catch (e) {
      error.show(e);
    }
  }
  await draw();
  return subscribe(["system"], (event) => {
    if (event.type === "system.update.progress" || event.type === "system.update.error") {
      progress.append(h("li", {}, `${event.step || "error"}: ${event.message || event.error || ""}`));
    }
    if (event.type === "system.update.available") draw();
  });
}
