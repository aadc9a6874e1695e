// Users (create, role, enable, delete; the server refuses deleting oneself or the last admin) and
// the signed-in admin's own API tokens (the token string is shown once, at creation).

import { get, post, put, del } from "../../api.js";
import { h, clear, field, errorBox } from "../../dom.js";

export async function render(main, { me }) {
  const error = errorBox();
  const usersBox = h("div", { class: "table-wrap", id: "users" });
  const tokensBox = h("div", { id: "tokens" });
  main.append(h("h1", {}, "Users and tokens"), error, usersBox, newUserForm(error, () => drawUsers()), h("h2", {}, "My API tokens"), tokensBox);

  async function drawUsers() {
    const users = await get("/users");
    clear(usersBox);
    const act = (promise) => promise.then(drawUsers, (e) => error.show(e));
    const rows = users.map((u) => {
      const role = h("select", { "aria-label": `Role of ${u.username}` }, ["admin", "standard"].map((r) => h("option", { value: r, selected: r === u.role }, r)));
      role.addEventListener("change", () => act(put(`/users/${u.id}`, { role: role.value })));
      const enabled = h("input", { type: "checkbox", checked: u.enabled, "aria-label": `${u.username} enabled` });
      enabled.addEventListener("change", () => act(put(`/users/${u.id}`, { enabled: enabled.checked })));
      return h("tr", { dataset: { username: u.username } }, h("td", {}, u.username), h("td", {}, u.displayName || ""), h("td", {}, role), h("td", {}, enabled),
        h("td", {}, u.id === me.id ? h("span", { class: "muted" }, "you") :
          h("button", { type: "button", class: "link danger", onclick: () => confirm(`Delete ${u.username}?`) && act(del(`/users/${u.id}`)) }, "delete")));
    });
    usersBox.append(h("table", {}, h("thead", {}, h("tr", {}, ["Username", "Name", "Role", "Enabled", ""].map((c) => h("th", {}, c)))), h("tbody", {}, rows)));
  }

  async function drawTokens(created) {
    const tokens = await get("/me/tokens");
    clear(tokensBox);
    if (created) {
      tokensBox.append(h("div", { class: "card", role: "status" }, h("p", {}, `Token "${created.name}": copy it now, it is not shown again.`),
        h("p", { class: "secret", id: "new-token" }, created.token)));
    }
    const name = h("input", { id: "token-name", required: true });
    const form = h("form", { class: "row" }, field("New token name", name), h("button", { type: "submit" }, "Create token"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        drawTokens(await post("/me/tokens", { name: name.value.trim() }));
      } catch (e) {
        error.show(e);
      }
    });
    tokensBox.append(
      tokens.length ? h("table", {}, h("tbody", {}, tokens.map((t) => h("tr", {}, h("td", {}, t.name), h("td", { class: "muted" }, t.lastUsedAt ? `used ${new Date(t.lastUsedAt).toLocaleString()}` : "never used"),
        h("td", {}, h("button", { type: "button", class: "link danger", onclick: () => del(`/me/tokens/${t.id}`).then(() => drawTokens(), (e) => error.show(e)) }, "revoke")))))) : h("p", { class: "muted" }, "No token."),
      form);
  }

  await Promise.all([drawUsers(), drawTokens()]);
}

function newUserForm(error, done) {
  const username = h("input", { required: true, autocomplete: "off", id: "new-user-username" });
  const displayName = h("input", { id: "new-user-name" });
  const password = h("input", { type: "password", required: true, autocomplete: "new-password", id: "new-user-password" });
  const role = h("select", { id: "new-user-role" }, h("option", { value: "standard" }, "standard"), h("option", { value: "admin" }, "admin"));
  const form = h("form", { class: "card", id: "new-user" }, h("h2", {}, "New user"),
    h("div", { class: "row" }, field("Username", username), field("Display name", displayName), field("Password", password), field("Role", role)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create user")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.show(null);
    try {
      await post("/users", { username: username.value.trim(), displayName: displayName.value.trim() || username.value.trim(), password: password.value, role: role.value });
      form.reset();
      done();
    } catch (e) {
      error.show(e);
    }
  });
  return form;
}
