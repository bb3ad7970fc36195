// End-to-end test of a tenant's own staff through masto.js's admin client
// (issue 28). tests/e2e/e2e_driver.c starts the server, makes the tenant in
// approval mode, its accounts and their roles through the operator's API,
// and runs this script with:
//   EUNHA_E2E_URL           http://localhost:PORT
//   EUNHA_E2E_TOKEN_OLGA    an admin's token (admin scopes)
//   EUNHA_E2E_TOKEN_MONA    a moderator's (admin scopes)
//   EUNHA_E2E_TOKEN_MICK    a custom role with manage_reports only (admin scopes)
//   EUNHA_E2E_TOKEN_BOB     a user's, EUNHA_E2E_TOKEN_RITA another user's
// A sign-up waits and an admin approves it; bob reports rita citing a rule
// and a moderator takes the report, warns rita through an account action
// and resolves it; rita sees her strike; a role without the permission is
// refused 403. It exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { createOAuthAPIClient, createRestAPIClient } from "masto";

const url = process.env.EUNHA_E2E_URL;
const tokens = {};
for (const who of ["OLGA", "MONA", "MICK", "BOB", "RITA"]) {
  tokens[who] = process.env[`EUNHA_E2E_TOKEN_${who}`];
  if (!url || !tokens[who]) {
    console.error(`EUNHA_E2E_URL and EUNHA_E2E_TOKEN_${who} must be set`);
    process.exit(2);
  }
}
const client = (who) => createRestAPIClient({ url, accessToken: tokens[who] });
const olga = client("OLGA");
const mona = client("MONA");
const mick = client("MICK");
const bob = client("BOB");
const rita = client("RITA");

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const step = (name) => console.log(`admin e2e: ${name}`);

// The error masto.js throws for a refused request, with its status.
async function refused(what, fn, status = 403) {
  try {
    await fn();
  } catch (err) {
    assert.equal(err?.statusCode, status, `${what}: ${err}`);
    return err;
  }
  throw new Error(`${what} was not refused`);
}

async function main() {
  step("a sign-up waits for approval");
  const anon = createRestAPIClient({ url });
  const app = await anon.v1.apps.create({ clientName: "admin e2e", redirectUris: OOB, scopes: "read write" });
  const oauth = createOAuthAPIClient({ url });
  const appToken = await oauth.token.create({
    grantType: "client_credentials",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: OOB,
    scope: "read write",
  });
  const appClient = createRestAPIClient({ url, accessToken: appToken.accessToken });
  await appClient.v1.accounts.create({
    username: "pete",
    email: "pete@example.com",
    password: "a long enough password 1",
    agreement: true,
    locale: "en",
    reason: "let me in",
  });
  const pending = await olga.v1.admin.accounts.list({ pending: true });
  assert.equal(pending.length, 1);
  assert.equal(pending[0].username, "pete");
  assert.equal(pending[0].approved, false);
  assert.equal(pending[0].inviteRequest, "let me in");
  const pendingV2 = await olga.v2.admin.accounts.list({ status: "pending", origin: "local" });
  assert.deepEqual(pendingV2.map((a) => a.id), [pending[0].id]);

  step("an admin approves it");
  const approved = await olga.v1.admin.accounts.$select(pending[0].id).approve();
  assert.equal(approved.approved, true);
  assert.equal((await olga.v1.admin.accounts.list({ pending: true })).length, 0);
  const staff = await olga.v1.admin.accounts.list({ staff: true });
  assert.deepEqual(staff.map((a) => a.username).sort(), ["mick", "mona", "olga"]);
  const shown = await olga.v1.admin.accounts.$select(approved.id).fetch();
  assert.equal(shown.account.username, "pete");

  step("the instance's rules");
  const made = await fetch(`${url}/api/v1/admin/rules`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.OLGA}`, "content-type": "application/json" },
    body: JSON.stringify({ text: "Be kind" }),
  });
  assert.equal(made.status, 200);
  const rules = await anon.v1.instance.rules.list();
  assert.equal(rules.length, 1);
  assert.equal(rules[0].text, "Be kind");
  const moderatorRules = await fetch(`${url}/api/v1/admin/rules`, {
    headers: { authorization: `Bearer ${tokens.MONA}` },
  });
  assert.equal(moderatorRules.status, 403, "a moderator has no manage_rules");

  step("bob reports rita, citing the rule");
  const ritaAccount = await rita.v1.accounts.verifyCredentials();
  const post = await rita.v1.statuses.create({ status: "you are all wrong" });
  const report = await bob.v1.reports.create({
    accountId: ritaAccount.id,
    statusIds: [post.id],
    ruleIds: [rules[0].id],
    comment: "rude",
  });
  assert.equal(report.category, "violation");
  assert.deepEqual(report.ruleIds, [rules[0].id]);

  step("a moderator takes the report, warns rita and resolves it");
  const monaAccount = await mona.v1.accounts.verifyCredentials();
  const open = await mona.v1.admin.reports.list();
  assert.equal(open.length, 1);
  assert.equal(open[0].id, report.id);
  assert.equal(open[0].targetAccount.id, ritaAccount.id);
  assert.equal(open[0].statuses[0].id, post.id);
  assert.equal(open[0].rules[0].text, "Be kind");
  const mine = await mona.v1.admin.reports.$select(report.id).assignToSelf();
  assert.equal(mine.assignedAccount.id, monaAccount.id);
  await mona.v1.admin.accounts.$select(ritaAccount.id).action.create({
    type: "none",
    text: "Please be kind",
    reportId: report.id,
  });
  const resolved = await mona.v1.admin.reports.$select(report.id).resolve();
  assert.equal(resolved.actionTaken, true);
  assert.equal(resolved.actionTakenByAccount.id, monaAccount.id);
  assert.equal((await mona.v1.admin.reports.list()).length, 0);
  assert.equal((await mona.v1.admin.reports.list({ resolved: true })).length, 1);

  step("rita is told of her strike");
  const notes = await rita.v1.notifications.list({ types: ["moderation_warning"] });
  assert.equal(notes.length, 1);
  assert.equal(notes[0].moderationWarning.action, "none");
  assert.equal(notes[0].moderationWarning.text, "Please be kind");
  assert.deepEqual(notes[0].moderationWarning.statusIds, [post.id]);
  assert.equal(notes[0].moderationWarning.targetAccount.id, ritaAccount.id);

  step("a role without the permission is refused");
  const desk = await mick.v1.admin.reports.list({ resolved: true });
  assert.equal(desk.length, 1, "manage_reports lets mick read reports");
  const err = await refused("mick lists accounts", () => mick.v1.admin.accounts.list());
  assert.match(String(err.message), /This action is not allowed/);
  await refused("mick acts on an account", () =>
    mick.v1.admin.accounts.$select(ritaAccount.id).action.create({ type: "suspend" }));
  await refused("a moderator deletes an account's data", () =>
    mona.v1.admin.accounts.$select(ritaAccount.id).remove());
  await refused("a user lists reports", () => bob.v1.admin.reports.list());
  const ritaAfter = await olga.v1.admin.accounts.$select(ritaAccount.id).fetch();
  assert.equal(ritaAfter.suspended, false);

  console.log("admin e2e: all checks passed");
}

main().catch((err) => {
  console.error("admin e2e: FAILED:", err?.stack || err);
  if (err?.statusCode) console.error("admin e2e: status", err.statusCode, "description", err.description);
  process.exit(1);
});
