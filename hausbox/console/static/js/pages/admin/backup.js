// Backups: download the full export (GET /backup, fetched with the token and saved from a blob,
// since a plain link cannot carry the Authorization header), restore an uploaded file (POST
// /backup, multipart "file"), and the automatic local backups taken before an update.

import { api, get, post } from "../../api.js";
import { h, clear, errorBox } from "../../dom.js";

export async function render(main) {
  const error = errorBox();
  const status = h("p", { role: "status", id: "backup-status" });
  const download = h("button", { type: "button", class: "primary", id: "backup-download" }, "Download a backup");
  download.addEventListener("click", async () => {
    error.show(null);
    download.disabled = true;
    try {
      const response = await api("GET", "/backup", undefined, { blob: true });
      // A box without history answers JSON, with no file name of its own.
      const json = (response.headers.get("Content-Type") || "").startsWith("application/json");
      const fallback = `hausbox-backup-${new Date().toISOString().slice(0, 10)}.${json ? "json" : "zip"}`;
      const name = (/filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "") || [])[1] || fallback;
      const url = URL.createObjectURL(await response.blob());
      const link = h("a", { href: url, download: name });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      status.textContent = `Saved ${name}.`;
    } catch (e) {
      error.show(e);
    } finally {
      download.disabled = false;
    }
  });

  const file = h("input", { type: "file", accept: ".zip,.json,application/zip,application/json", id: "backup-file" });
  const restore = h("form", { class: "card", id: "backup-restore" },
    h("h2", {}, "Restore"), h("p", { class: "muted" }, "Replaces this box's configuration and history with the backup's. A restart follows."),
    h("label", { for: "backup-file" }, "Backup file"), " ", file,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "danger" }, "Restore")));
  restore.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    if (!file.files.length) return error.show("Choose a backup file first.");
    if (!confirm("Restore this backup? The current configuration is replaced.")) return;
    try {
      // A ZIP goes as the multipart "file"; a JSON backup (a box without history) as a JSON body.
      const chosen = file.files[0];
      const head = new Uint8Array(await chosen.slice(0, 1).arrayBuffer());
      let body;
      if (head[0] === 0x7b) body = JSON.parse(await chosen.text());
      else {
        body = new FormData();
        body.append("file", chosen);
      }
      const result = await api("POST", "/backup", body);
      status.textContent = result && result.restartRequired ? "Restored: restart the box for it to take full effect." : "Restored.";
    } catch (e) {
      error.show(e);
    }
  });

  const local = h("div", { id: "backup-local" });
  main.append(h("h1", {}, "Backups"), error, status, h("div", { class: "card" }, h("p", {}, "Everything: configuration, history and files."), download), restore,
    h("h2", {}, "Automatic backups"), local);
  try {
    const { backups } = await get("/backup/local");
    if (!backups.length) local.append(h("p", { class: "muted" }, "None yet: one is taken before each update."));
    for (const backup of backups) {
      const name = backup.filename || backup.name;
      local.append(h("div", { class: "row" }, h("span", {}, name), h("button", { type: "button", onclick: async () => {
        if (!confirm(`Restore ${name}?`)) return;
        try {
          await post("/backup/restore-local", { filename: name });
          status.textContent = "Restored: restart the box for it to take full effect.";
        } catch (e) {
          error.show(e);
        }
      } }, "Restore")));
    }
  } catch (e) {
    clear(local).append(h("p", { class: "muted" }, `Local backups unavailable: ${e.message}`));
  }
}
