// Sign-in, with the second step when the account has MFA on: POST /auth/login answers either the
// token pair or {mfaRequired, challenge, methods, expiresAt}; the code (or a backup code) then goes
// to POST /auth/mfa/verify with the challenge. A trusted-device token, once given, is kept and sent
// on the next sign-in so that this browser skips the code.

import { publicPost, signedIn } from "../api.js";
import { h, clear, field, errorBox } from "../dom.js";
import { t } from "../i18n.js";

const TRUSTED = "hausbox.trustedDevice";

export function render(main, { done }) {
  clear(main);
  const username = h("input", { name: "username", id: "signin-username", required: true, autocomplete: "username" });
  const password = h("input", { name: "password", id: "signin-password", type: "password", required: true, autocomplete: "current-password" });
  const error = errorBox();
  const submit = h("button", { type: "submit", class: "primary", id: "signin-submit" }, t("Sign in"));
  const form = h("form", { class: "card", id: "signin-form" },
    h("h1", {}, t("Sign in")), field(t("Username"), username), field(t("Password"), password), error, h("div", { class: "actions" }, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    submit.disabled = true;
    try {
      const answer = await publicPost("/auth/login", { username: username.value.trim(), password: password.value });
      if (answer.mfaRequired) {
        const trusted = localStorage.getItem(`${TRUSTED}.${username.value.trim()}`);
        if (trusted) {
          const pair = await publicPost("/auth/mfa/verify", { challenge: answer.challenge, trustedDeviceToken: trusted }).catch(() => null);
          if (pair) return finish(pair, username.value.trim(), done);
          localStorage.removeItem(`${TRUSTED}.${username.value.trim()}`);
        }
        return codeStep(main, answer, username.value.trim(), done);
      }
      finish(answer, username.value.trim(), done);
    } catch (e) {
      error.show(e.status === 401 ? "Wrong username or password" : e);
      submit.disabled = false;
      password.select();
    }
  });
  main.append(form);
  username.focus();
}

function finish(pair, username, done) {
  if (pair.trustedDeviceToken) localStorage.setItem(`${TRUSTED}.${username}`, pair.trustedDeviceToken);
  signedIn(pair);
  done();
}

function codeStep(main, challenge, username, done) {
  clear(main);
  let backup = false;
  const code = h("input", { name: "code", id: "mfa-code", required: true, autocomplete: "one-time-code", inputmode: "numeric", pattern: "[0-9]{6}", maxlength: 6 });
  const trust = h("input", { type: "checkbox", id: "mfa-trust", name: "trustDevice" });
  const label = h("label", { for: "mfa-code" }, t("Authentication code"));
  const error = errorBox();
  const toggle = h("button", { type: "button", class: "link", id: "mfa-backup" }, t("Use a backup code"));
  toggle.addEventListener("click", () => {
    backup = !backup;
    label.textContent = backup ? "Backup code" : t("Authentication code");
    toggle.textContent = backup ? "Use the authenticator app" : t("Use a backup code");
    code.removeAttribute("pattern");
    code.inputMode = backup ? "text" : "numeric";
    code.maxLength = backup ? 32 : 6;
    if (!backup) code.pattern = "[0-9]{6}";
    code.value = "";
    code.focus();
  });
  const form = h("form", { class: "card", id: "mfa-form" },
    h("h1", {}, t("Sign in")),
    h("p", { class: "muted" }, "Enter the code from your authenticator app."),
    h("div", { class: "field" }, label, code),
    h("div", { class: "check" }, trust, h("label", { for: "mfa-trust" }, t("Trust this device for 30 days"))),
    error,
    h("div", { class: "actions" }, toggle, h("button", { type: "submit", class: "primary", id: "mfa-submit" }, t("Verify"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    const body = { challenge: challenge.challenge, trustDevice: trust.checked };
    body[backup ? "backupCode" : "code"] = code.value.trim();
    try {
      finish(await publicPost("/auth/mfa/verify", body), username, done);
    } catch (e) {
      // An expired or used-up challenge cannot be answered again: back to the password.
      if (e.status === 401 && /sign in again/i.test(e.message)) return render(main, { done });
      error.show(e);
      code.select();
    }
  });
  main.append(form);
  code.focus();
}
