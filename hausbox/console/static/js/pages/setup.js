// First run: the first administrator (with the console's language), then the home's location, which
// sets the time zone and the sunrise/sunset times (settings home.latitude and home.longitude).

import { publicPost, put, get, signedIn } from "../api.js";
import { h, clear, field, errorBox } from "../dom.js";
import { t, setLanguage, browserLanguage, LANGUAGES } from "../i18n.js";

export function render(main, { done }) {
  setLanguage(browserLanguage());
  accountStep(main, done);
}

function accountStep(main, done) {
  clear(main);
  const language = h("select", { name: "language", id: "setup-language" },
    LANGUAGES.map(([code, name]) => h("option", { value: code, selected: code === browserLanguage() }, name)));
  const username = h("input", { name: "username", id: "setup-username", required: true, autocomplete: "username", maxlength: 64 });
  const displayName = h("input", { name: "displayName", id: "setup-displayname", required: true, autocomplete: "name" });
  const password = h("input", { name: "password", id: "setup-password", type: "password", required: true, autocomplete: "new-password", minlength: 8 });
  const again = h("input", { name: "password2", id: "setup-password2", type: "password", required: true, autocomplete: "new-password" });
  const error = errorBox();
  const submit = h("button", { type: "submit", class: "primary", id: "setup-submit" }, t("Next"));
  // Changing the language re-labels the form at once (the wizard is the first thing a person sees).
  language.addEventListener("change", () => {
    setLanguage(language.value);
    const kept = [username.value, displayName.value];
    accountStep(main, done);
    main.querySelector("#setup-language").value = language.value;
    main.querySelector("#setup-username").value = kept[0];
    main.querySelector("#setup-displayname").value = kept[1];
  });
  const form = h("form", { class: "card", id: "setup-form" },
    h("h1", {}, t("Welcome to hausbox")),
    h("h2", {}, t("Create the first administrator")),
    field(t("Language"), language),
    field(t("Username"), username),
    field(t("Display name"), displayName),
    field(t("Password"), password),
    field(t("Repeat the password"), again),
    error,
    h("div", { class: "actions" }, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    if (password.value !== again.value) return error.show(t("The passwords differ"));
    submit.disabled = true;
    try {
      const pair = await publicPost("/auth/setup", {
        username: username.value.trim(), password: password.value, displayName: displayName.value.trim() || username.value.trim(), language: language.value,
      });
      signedIn(pair);
      locationStep(main, done);
    } catch (e) {
      error.show(e);
      submit.disabled = false;
    }
  });
  main.append(form);
  username.focus();
}

function locationStep(main, done) {
  clear(main);
  const latitude = h("input", { name: "latitude", id: "setup-latitude", type: "number", step: "any", min: -90, max: 90, required: true, inputmode: "decimal" });
  const longitude = h("input", { name: "longitude", id: "setup-longitude", type: "number", step: "any", min: -180, max: 180, required: true, inputmode: "decimal" });
  const error = errorBox();
  const result = h("p", { class: "muted", id: "setup-timezone", role: "status" });
  const form = h("form", { class: "card", id: "location-form" },
    h("h1", {}, t("Home location")),
    h("p", { class: "muted" }, t("Used for the time zone, sunrise and sunset.")),
    // The engine picks its time zone at start-up (hausbox/system/timezone.py): say so.
    h("p", { class: "muted" }, t("Sunrise and sunset follow at once; the time zone at the box's next start.")),
    h("div", { class: "row" }, field(t("Latitude"), latitude), field(t("Longitude"), longitude)),
    error, result,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "ghost", id: "setup-skip", onclick: () => done() }, t("Skip")),
      h("button", { type: "submit", class: "primary", id: "setup-finish" }, t("Finish"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    try {
      await put("/settings", { "home.latitude": Number(latitude.value), "home.longitude": Number(longitude.value) });
      const zone = await get("/system/timezone").catch(() => null);
      if (zone) result.textContent = `Time zone: ${zone.tz}`;
      done();
    } catch (e) {
      error.show(e);
    }
  });
  main.append(form);
  latitude.focus();
}
