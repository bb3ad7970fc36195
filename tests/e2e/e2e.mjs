// End-to-end test: a real Mastodon client library (masto.js) against a
// running Eunha. tests/e2e/e2e_driver.c starts the server, makes the tenant
// and bob (through the admin API), then runs this script with:
//   EUNHA_E2E_URL       http://localhost:PORT (the tenant answers for that host)
//   EUNHA_E2E_BOB       bob's e-mail address, for the password grant
//   EUNHA_E2E_PASSWORD  bob's password
// The script registers alice through the API, signs bob in, posts, follows,
// and reads home, notifications (plain and grouped), conversations, search,
// markers and filters the way a client does, asserting on what comes back.
// It exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { createOAuthAPIClient, createRestAPIClient } from "masto";

const url = process.env.EUNHA_E2E_URL;
const bobEmail = process.env.EUNHA_E2E_BOB;
const password = process.env.EUNHA_E2E_PASSWORD;
if (!url || !bobEmail || !password) {
  console.error("EUNHA_E2E_URL, EUNHA_E2E_BOB and EUNHA_E2E_PASSWORD must be set");
  process.exit(2);
}

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write follow push";

const step = (name) => console.log(`e2e: ${name}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Notifications are written just after the request that causes them is
// answered; poll briefly rather than race them.
async function eventually(what, fn) {
  let last;
  for (let i = 0; i < 50; i++) {
    last = await fn();
    if (last) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  step("instance");
  const anon = createRestAPIClient({ url });
  const instance = await anon.v2.instance.fetch();
  assert.match(instance.version, /^4\.\d+\.\d+/, "a Mastodon-compatible version string");
  const v1instance = await anon.v1.instance.fetch();
  assert.ok(v1instance.uri || v1instance.title !== undefined);

  step("app");
  const app = await anon.v1.apps.create({
    clientName: "eunha e2e",
    redirectUris: OOB,
    scopes: SCOPES,
    website: "https://example.com",
  });
  assert.ok(app.clientId && app.clientSecret, "client id and secret");

  const oauth = createOAuthAPIClient({ url });
  const appToken = await oauth.token.create({
    grantType: "client_credentials",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: OOB,
    scope: SCOPES,
  });
  const appClient = createRestAPIClient({ url, accessToken: appToken.accessToken });
  const verifiedApp = await appClient.v1.apps.verifyCredentials();
  assert.equal(verifiedApp.name, "eunha e2e");

  step("register alice");
  const aliceToken = await appClient.v1.accounts.create({
    username: "alice",
    email: "alice@example.com",
    password: "a long enough password 1",
    agreement: true,
    locale: "en",
  });
  assert.ok(aliceToken.accessToken, "registration returns a token");
  const alice = createRestAPIClient({ url, accessToken: aliceToken.accessToken });
  const aliceAccount = await alice.v1.accounts.verifyCredentials();
  assert.equal(aliceAccount.username, "alice");

  step("bob signs in with the password grant");
  const bobToken = await oauth.token.create({
    grantType: "password",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: OOB,
    username: bobEmail,
    password,
    scope: SCOPES,
  });
  const bob = createRestAPIClient({ url, accessToken: bobToken.accessToken });
  const bobAccount = await bob.v1.accounts.verifyCredentials();
  assert.equal(bobAccount.username, "bob");

  step("alice posts");
  const first = await alice.v1.statuses.create({ status: "Hello from masto.js #eunha" });
  assert.equal(first.account.id, aliceAccount.id);
  assert.match(first.content, /Hello from masto\.js/);
  assert.equal(first.tags[0]?.name, "eunha");

  step("bob finds and follows alice");
  const found = await bob.v1.accounts.lookup({ acct: "alice" });
  assert.equal(found.id, aliceAccount.id);
  const searched = await bob.v2.search.list({ q: "alice", type: "accounts" });
  assert.ok(searched.accounts.some((a) => a.id === aliceAccount.id), "search finds alice");
  const rel = await bob.v1.accounts.$select(aliceAccount.id).follow();
  assert.equal(rel.following, true);
  const [rel2] = await bob.v1.accounts.relationships.fetch({ id: [aliceAccount.id] });
  assert.equal(rel2.following, true);

  step("alice posts again; bob's home has both");
  const second = await alice.v1.statuses.create({ status: "Second post, for my follower" });
  const home = await eventually("bob's home timeline", async () => {
    const page = await bob.v1.timelines.home.list({ limit: 20 });
    const ids = page.map((s) => s.id);
    return ids.includes(second.id) && ids.includes(first.id) ? page : null;
  });
  assert.equal(home[0].id, second.id, "newest first");

  step("bob interacts");
  const faved = await bob.v1.statuses.$select(first.id).favourite();
  assert.equal(faved.favourited, true);
  assert.equal(faved.favouritesCount, 1);
  await bob.v1.statuses.$select(first.id).bookmark();
  const reply = await bob.v1.statuses.create({
    status: "@alice welcome!",
    inReplyToId: first.id,
  });
  assert.equal(reply.inReplyToId, first.id);
  const favs = await bob.v1.favourites.list();
  assert.deepEqual(favs.map((s) => s.id), [first.id]);
  const marks = await bob.v1.bookmarks.list();
  assert.deepEqual(marks.map((s) => s.id), [first.id]);

  step("alice reads her notifications");
  const notes = await eventually("three notifications", async () => {
    const list = await alice.v1.notifications.list();
    return list.length >= 3 ? list : null;
  });
  const types = notes.map((n) => n.type);
  assert.deepEqual(types, ["mention", "favourite", "follow"]);
  assert.equal(notes[0].status.id, reply.id);
  assert.equal(notes[1].account.id, bobAccount.id);
  assert.equal(notes[2].account.username, "bob");
  const unread = await alice.v1.notifications.unreadCount.fetch();
  assert.equal(unread.count, 3);
  const grouped = await alice.v2.notifications.list();
  assert.equal(grouped.notificationGroups.length, 3);
  assert.ok(grouped.accounts.some((a) => a.id === bobAccount.id));
  assert.ok(grouped.statuses.some((s) => s.id === first.id));

  step("markers");
  await alice.v1.markers.create({ notifications: { lastReadId: notes[0].id } });
  const markers = await alice.v1.markers.fetch({ timeline: ["notifications"] });
  assert.equal(markers.notifications.lastReadId, notes[0].id);
  const unreadAfter = await alice.v1.notifications.unreadCount.fetch();
  assert.equal(unreadAfter.count, 0);

  step("direct message and conversations");
  const dm = await bob.v1.statuses.create({ status: "@alice just between us", visibility: "direct" });
  const convs = await alice.v1.conversations.list();
  assert.equal(convs.length, 1);
  assert.equal(convs[0].lastStatus.id, dm.id);
  assert.equal(convs[0].unread, true);
  assert.equal(convs[0].accounts[0].id, bobAccount.id);
  const read = await alice.v1.conversations.$select(convs[0].id).read();
  assert.equal(read.unread, false);

  step("filters");
  const filter = await bob.v2.filters.create({
    title: "no seconds",
    context: ["home"],
    filterAction: "warn",
    keywordsAttributes: [{ keyword: "second", wholeWord: true }],
  });
  assert.equal(filter.keywords[0].keyword, "second");
  const filteredHome = await bob.v1.timelines.home.list();
  const marked = filteredHome.find((s) => s.id === second.id);
  assert.equal(marked.filtered?.[0]?.filter.title, "no seconds");
  await bob.v2.filters.$select(filter.id).remove();

  step("client start-up endpoints");
  assert.deepEqual(await alice.v1.customEmojis.list(), []);
  const prefs = await alice.v1.preferences.fetch();
  assert.equal(prefs["posting:default:visibility"], "public");
  assert.deepEqual(await alice.v1.announcements.list(), []);
  const tag = await alice.v1.tags.$select("eunha").follow();
  assert.equal(tag.following, true);

  step("quotes");
  const quote = await bob.v1.statuses.create({ status: "worth quoting", quotedStatusId: first.id });
  assert.equal(quote.quote?.state, "accepted");
  assert.equal(quote.quote?.quotedStatus?.id, first.id);
  assert.equal(quote.quoteApproval?.currentUser, "automatic");
  assert.deepEqual(quote.quoteApproval?.automatic, ["public"]);

  step("featured hashtags and profiles");
  const featured = await bob.v1.featuredTags.create({ name: "#Eunha" });
  assert.equal(featured.name, "Eunha");
  assert.equal(typeof featured.statusesCount, "string");
  assert.deepEqual(
    (await bob.v1.accounts.$select(bobAccount.id).featuredTags.list()).map((t) => t.name),
    ["Eunha"],
  );
  assert.ok(Array.isArray(await bob.v1.featuredTags.suggestions.list()));
  await bob.v1.featuredTags.$select(featured.id).remove();
  assert.deepEqual(await bob.v1.featuredTags.list(), []);
  const endorsed = await bob.v1.accounts.$select(aliceAccount.id).pin();
  assert.equal(endorsed.endorsed, true);
  const endorsements = await bob.v1.endorsements.list();
  assert.deepEqual(endorsements.map((a) => a.id), [aliceAccount.id]);
  assert.equal((await bob.v1.accounts.$select(aliceAccount.id).unpin()).endorsed, false);

  console.log("e2e: all checks passed");
}

main().catch((err) => {
  console.error("e2e: FAILED:", err?.stack || err);
  if (err?.statusCode) console.error("e2e: status", err.statusCode, "description", err.description);
  process.exit(1);
});
