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
// refused 403; an admin manages domain, e-mail, canonical e-mail and IP
// blocks and a domain allow, reads the dashboard's measures, dimensions
// and retention, and approves a trending tag. It exits non-zero on the
// first failed check.
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

  step("an admin blocks a domain, an e-mail domain, an address and an IP range");
  const block = await olga.v1.admin.domainBlocks.create({ domain: "spam.example", severity: "suspend" });
  assert.equal(block.domain, "spam.example");
  assert.equal(block.severity, "suspend");
  const blockEdited = await olga.v1.admin.domainBlocks.$select(block.id).update({ severity: "silence" });
  assert.equal(blockEdited.severity, "silence");
  assert.deepEqual((await olga.v1.admin.domainBlocks.list()).map((b) => b.domain), ["spam.example"]);
  const allow = await olga.v1.admin.domainAllows.create({ domain: "friend.example" });
  assert.equal((await olga.v1.admin.domainAllows.$select(allow.id).fetch()).domain, "friend.example");
  const emailBlock = await olga.v1.admin.emailDomainBlocks.create({ domain: "junk.example" });
  assert.equal(emailBlock.domain, "junk.example");
  const canonical = await olga.v1.admin.canonicalEmailBlocks.create({ email: "Pe.te+x@Example.com" });
  const tested = await olga.v1.admin.canonicalEmailBlocks.test({ email: "pete@example.com" });
  assert.deepEqual(tested.map((b) => b.id), [canonical.id]);
  const ipBlock = await olga.v1.admin.ipBlocks.create({ ip: "192.0.2.0/24", severity: "no_access" });
  assert.equal(ipBlock.ip, "192.0.2.0/24");
  assert.equal((await olga.v1.admin.ipBlocks.$select(ipBlock.id).update({ severity: "sign_up_block" })).severity,
    "sign_up_block");
  await refused("a sign-up at a blocked e-mail domain", () =>
    appClient.v1.accounts.create({
      username: "junky",
      email: "junky@junk.example",
      password: "a long enough password 2",
      agreement: true,
      locale: "en",
      reason: "spam",
    }), 422);
  await refused("a moderator blocks a domain", () =>
    mona.v1.admin.domainBlocks.create({ domain: "other.example" }));
  for (const [what, res, id] of [
    ["domain block", olga.v1.admin.domainBlocks, block.id],
    ["domain allow", olga.v1.admin.domainAllows, allow.id],
    ["e-mail domain block", olga.v1.admin.emailDomainBlocks, emailBlock.id],
    ["canonical e-mail block", olga.v1.admin.canonicalEmailBlocks, canonical.id],
    ["IP block", olga.v1.admin.ipBlocks, ipBlock.id],
  ]) {
    await res.$select(id).remove();
    assert.equal((await res.list()).length, 0, `${what} removed`);
  }

  step("the dashboard: measures, dimensions and retention");
  const day = new Date().toISOString().slice(0, 10);
  const range = { startAt: `${day}T00:00:00Z`, endAt: `${day}T23:59:59Z` };
  const measures = await olga.v1.admin.measures.create({ keys: ["new_users", "opened_reports"], ...range });
  const measure = (key) => measures.find((m) => m.key === key);
  assert.equal(measure("new_users").total, "6", "the driver's five accounts and pete, today");
  assert.equal(measure("opened_reports").total, "1", "bob's report");
  assert.equal(measure("new_users").data.length, 1);
  const dimensions = await olga.v1.admin.dimensions.create({ keys: ["software_versions"], limit: "5" });
  assert.ok(dimensions[0].data.some((d) => d.key === "eunha"));
  const cohorts = await olga.v1.admin.retention.create({ ...range, frequency: "day" });
  assert.equal(cohorts.length, 1);
  await refused("a role without view_dashboard reads measures", () =>
    mick.v1.admin.measures.create({ keys: ["new_users"], ...range }));

  step("a trending tag shows once an admin approves it");
  await bob.v1.statuses.create({ status: "all about #gardening", visibility: "public" });
  await rita.v1.statuses.create({ status: "more #gardening", visibility: "public" });
  await olga.v1.statuses.create({ status: "#gardening too", visibility: "public" });
  // The trends task scores a second after the activity (this server's
  // trends_refresh_seconds); three accounts against none yesterday.
  let tag;
  for (let i = 0; i < 100 && !tag; i++) {
    tag = (await olga.v1.admin.trends.tags.list()).find((t) => t.name === "gardening");
    if (!tag) await new Promise((res) => setTimeout(res, 200));
  }
  assert.ok(tag, "gardening is a candidate");
  assert.equal(tag.requiresReview, true);
  assert.equal((await anon.v1.trends.tags.list()).length, 0, "nothing shows before review");
  await olga.v1.admin.trends.tags.$select(tag.id).approve();
  assert.deepEqual((await anon.v1.trends.tags.list()).map((t) => t.name), ["gardening"]);

  step("follow suggestions: an account the staff feature, then dismissed");
  const rita_id = (await rita.v1.accounts.verifyCredentials()).id;
  const featured = await fetch(`${process.env.EUNHA_E2E_URL}/api/v1/admin/suggestions/${rita_id}`, {
    method: "POST",
    headers: { authorization: `Bearer ${process.env.EUNHA_E2E_TOKEN_OLGA}` },
  });
  assert.equal(featured.status, 200);
  const suggestions = await bob.v2.suggestions.list();
  const rs = suggestions.find((sg) => sg.account.id === rita_id);
  assert.ok(rs, "rita is suggested to bob");
  assert.deepEqual(rs.sources, ["featured"]);
  assert.equal(rs.source, "staff");
  await bob.v1.suggestions.$select(rita_id).remove();
  assert.ok(!(await bob.v2.suggestions.list()).some((sg) => sg.account.id === rita_id));

  console.log("admin e2e: all checks passed");
}

main().catch((err) => {
  console.error("admin e2e: FAILED:", err?.stack || err);
  if (err?.statusCode) console.error("admin e2e: status", err.statusCode, "description", err.description);
  process.exit(1);
});
