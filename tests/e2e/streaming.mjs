// Streaming end to end: masto.js's WebSocket client against a running
// Eunha. tests/e2e/e2e_driver.c starts the server and makes bob and carol,
// then runs this with EUNHA_E2E_URL, EUNHA_E2E_BOB, EUNHA_E2E_CAROL and
// EUNHA_E2E_PASSWORD. Bob follows carol and listens on his user stream
// (the token goes as the WebSocket subprotocol, masto's default); carol
// posts, mentions bob and deletes, and bob must see update, notification
// and delete. Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import WebSocket from "ws";
import { createOAuthAPIClient, createRestAPIClient, createStreamingAPIClient } from "masto";

const url = process.env.EUNHA_E2E_URL;
const bobEmail = process.env.EUNHA_E2E_BOB;
const carolEmail = process.env.EUNHA_E2E_CAROL;
const password = process.env.EUNHA_E2E_PASSWORD;
if (!url || !bobEmail || !carolEmail || !password) {
  console.error("EUNHA_E2E_URL, EUNHA_E2E_BOB, EUNHA_E2E_CAROL and EUNHA_E2E_PASSWORD must be set");
  process.exit(2);
}
const step = (name) => console.log(`e2e streaming: ${name}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function signIn(app, email) {
  const oauth = createOAuthAPIClient({ url });
  const t = await oauth.token.create({
    grantType: "password",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    username: email,
    password,
    scope: "read write follow",
  });
  return { token: t.accessToken, rest: createRestAPIClient({ url, accessToken: t.accessToken }) };
}

// One consumer reads the subscription into events; waits look there, so a
// wait that times out leaves nothing behind that would swallow events.
const events = [];
async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const i = events.findIndex(pred);
    if (i >= 0) return events.splice(i, 1)[0];
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function main() {
  const anon = createRestAPIClient({ url });
  const v2 = await anon.v2.instance.fetch();
  const streamingApiUrl = v2.configuration.urls.streaming;
  assert.match(streamingApiUrl, /^wss?:\/\//, "configuration.urls.streaming");
  const v1 = await anon.v1.instance.fetch();
  assert.equal(v1.urls.streamingApi, streamingApiUrl);

  const app = await anon.v1.apps.create({
    clientName: "eunha e2e streaming",
    redirectUris: "urn:ietf:wg:oauth:2.0:oob",
    scopes: "read write follow",
  });
  const { token: bobToken, rest: bob } = await signIn(app, bobEmail);
  const { rest: carol } = await signIn(app, carolEmail);
  const carolAccount = await carol.v1.accounts.verifyCredentials();
  await bob.v1.accounts.$select(carolAccount.id).follow();

  step("subscribe");
  const streaming = createStreamingAPIClient({
    streamingApiUrl,
    accessToken: bobToken,
    implementation: WebSocket,
    retry: 3,
  });
  const sub = streaming.user.subscribe();
  const reader = (async () => {
    for await (const e of sub) events.push(e);
  })();
  reader.catch((err) => console.error("stream ended:", err));

  // The subscription is live once a status of carol's comes through.
  step("update");
  let update;
  for (let i = 0; i < 50 && !update; i++) {
    const s = await carol.v1.statuses.create({ status: `hello stream ${i}` });
    try {
      update = await waitFor((e) => e.event === "update" && e.payload.id === s.id, 500, "update");
    } catch {
      update = undefined;
    }
  }
  assert.ok(update, "an update event");
  assert.equal(update.payload.account.username, "carol");
  assert.deepEqual(update.stream, ["user"]);

  step("notification");
  const mention = await carol.v1.statuses.create({ status: "@bob look at this" });
  const note = await waitFor((e) => e.event === "notification", 10000, "notification");
  assert.equal(note.payload.type, "mention");
  assert.equal(note.payload.status.id, mention.id);

  step("delete");
  await carol.v1.statuses.$select(mention.id).remove();
  const del = await waitFor((e) => e.event === "delete", 10000, "delete");
  assert.equal(del.payload, mention.id);

  sub.unsubscribe();
  streaming.close();
  step("ok");
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
