// The signed-in user's own account: display name, language, password, and two-factor sign-in
// (TOTP: a QR code to scan, confirmed by a first code, then the backup codes shown once).

import { api, get, put, post } from "../api.js";
import { h, clear, field, errorBox } from "../dom.js";
import { t, setLanguage, LANGUAGES } from "../i18n.js";

export async function render(main, { me }) {
  const error = errorBox();
  const status = h("p", { role: "status", id: "account-status" });
  const mfaBox = h("section", { class: "card", id: "mfa", "aria-labelledby": "mfa-title" });
  main.append(h("h1", {}, "My account"), error, status, profileForm(me, error, status), passwordForm(error, status), mfaBox);
  await drawMfa(mfaBox, error);
}

function profileForm(me, error, status) {
  const name = h("input", { id: "account-name", value: me.displayName || "", required: true });
  const language = h("select", { id: "account-language" }, LANGUAGES.map(([code, label]) => h("option", { value: code, selected: code === (me.preferences || {}).language }, label)));
  const form = h("form", { class: "card" }, h("h2", {}, "Profile"), h("div", { class: "row" }, field(t("Display name"), name), field(t("Language"), language)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    try {
      await put("/me", { displayName: name.value.trim() });
      await put("/me/preferences", { preferences: { ...(me.preferences || {}), language: language.value } });
      me.displayName = name.value.trim();
      me.preferences = { ...(me.preferences || {}), language: language.value };
      setLanguage(language.value);
      status.textContent = "Profile saved.";
    } catch (e) {
      error.show(e);
    }
  });
  return form;
}

function passwordForm(error, status) {
  const current = h("input", { type: "password", id: "account-current", autocomplete: "current-password", required: true });
  const next = h("input", { type: "password", id: "account-new", autocomplete: "new-password", required: true, minlength: 8 });
  const form = h("form", { class: "card" }, h("h2", {}, t("Password")), h("div", { class: "row" }, field("Current password", current), field("New password", next)),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Change password")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    try {
      await put("/me/password", { currentPassword: current.value, newPassword: next.value });
      form.reset();
      status.textContent = "Password changed.";
    } catch (e) {
      error.show(e);
    }
  });
  return form;
}

async function drawMfa(box, error) {
  const state = await get("/me/mfa");
  clear(box).append(h("h2", { id: "mfa-title" }, "Two-factor sign-in"));
  if (state.enabled) {
    const code = h("input", { id: "mfa-off-code", inputmode: "numeric", autocomplete: "one-time-code", required: true });
    const form = h("form", { class: "row" }, field("Current code", code), h("button", { type: "submit", class: "danger" }, "Turn off"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        await api("DELETE", "/me/mfa/totp", { code: code.value.trim() });
        drawMfa(box, error);
      } catch (e) {
        error.show(e);
      }
    });
    box.append(h("p", { id: "mfa-state" }, `On. ${state.backupCodesLeft} backup codes left.`), form);
    return;
  }
  const start = h("button", { type: "button", class: "primary", id: "mfa-start" }, "Set up an authenticator app");
  start.addEventListener("click", async () => {
    try {
      setupStep(box, await post("/me/mfa/totp/setup"), error);
    } catch (e) {
      error.show(e);
    }
  });
  box.append(h("p", { id: "mfa-state" }, "Off: a password alone signs in."), start);
}

function setupStep(box, setup, error) {
  // The QR code is the server's SVG (attributes only, no script or style), parsed as SVG and
  // put in the page as nodes.
  const svg = new DOMParser().parseFromString(setup.qrSvg, "image/svg+xml").documentElement;
  const code = h("input", { id: "mfa-confirm-code", inputmode: "numeric", autocomplete: "one-time-code", required: true, maxlength: 6 });
  const form = h("form", { class: "row" }, field("Code from the app", code), h("button", { type: "submit", class: "primary" }, "Confirm"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    try {
      const confirmed = await post("/me/mfa/totp/confirm", { code: code.value.trim() });
      clear(box).append(h("h2", {}, "Two-factor sign-in is on"),
        h("p", {}, "Keep these backup codes somewhere safe: each signs in once without the app. They are not shown again."),
        h("ul", { class: "secret", id: "backup-codes" }, confirmed.backupCodes.map((c) => h("li", {}, c))),
        h("button", { type: "button", onclick: () => drawMfa(box, error) }, "Done"));
    } catch (e) {
      error.show(e);
    }
  });
  clear(box).append(h("h2", { id: "mfa-title" }, "Scan with your authenticator app"),
    h("div", { class: "qr" }, document.importNode(svg, true)),
    h("p", {}, "Or type this key: ", h("code", { class: "secret", id: "mfa-secret" }, setup.secret)), form);
}
