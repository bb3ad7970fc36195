// A Fedify server standing in for "a federation peer that is not Eunha" in
// tests/fedify/fedify_driver.c. It serves two actors, "alice" and "zoe"
// (RSA keys made at start, so every run is a first contact), on plain HTTP
// at 127.0.0.1 under the canonical origin http://fedify.test: the server
// under test reaches that name through its [federation] hosts map, and this
// process reaches the tenant names it is told about (POST /control/map)
// through the fetch() wrapper below, keeping their Host header and so the
// signatures over it.
//
// Inbox listeners for Follow, Accept, Reject, Create, Like, Announce and
// Undo record what arrived (only activities whose draft-cavage signature
// Fedify verified reach a listener); a Follow is answered with an Accept.
// The control surface lives under /control/ on the same port (it is a test
// peer on loopback; nothing here is meant to face a network):
//
//   POST /control/map      {"host": "eunha.test", "port": 1234}
//   POST /control/follow   {"actor": "alice", "target": actor URI}
//   POST /control/like     {"actor": "alice", "object": status URI}
//   POST /control/announce {"actor": "alice", "object": status URI}
//   POST /control/reply    {"actor": "alice", "object": status URI, "content": html}
//   POST /control/quote    {"actor": "alice", "object": status URI}: a Note quoting it
//                          (Fedify's quoteUrl, sent as quoteUrl, _misskey_quote, quoteUri)
//   POST /control/undo     {"actor": "alice", "activity": id from an answer above}
//   GET  /control/state    {"received": [...], "follows": {id: state},
//                           "followers": {name: [URIs]}, "refused": [...]}
//
// "refused" lists the POSTs Fedify answered with an error (a signature it
// could not verify gets 401), with the signing form they came in.
//
// Each POST answers {"id": activity id} once the activity was delivered (no
// queue: Fedify sends at once and the answer carries its error if the
// remote inbox refused it), or {"error": ...} with status 502.
//
// Usage: node peer.mjs [PORT | fd:N]; PORT 0 or none picks a free port on
// 127.0.0.1, fd:N listens on the inherited listening socket N. The first
// line on stdout is "listening PORT". The process ends when stdin closes, so
// it does not outlive the test that started it. FEDIFY_PEER_DEBUG=1 prints
// Fedify's own log to stderr.

import http from "node:http";
import { randomUUID } from "node:crypto";
import {
  Accept,
  Announce,
  Create,
  Endpoints,
  Flag,
  Follow,
  Like,
  Mention,
  MemoryKvStore,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Reject,
  Undo,
  createFederation,
} from "@fedify/fedify";

const ORIGIN = "http://fedify.test";
const ACTORS = ["alice", "zoe"];

if (process.env.FEDIFY_PEER_DEBUG === "1") {
  // LogTape comes with Fedify; only loaded when asked for.
  const lt = await import("@logtape/logtape");
  await lt.configure({
    sinks: { console: lt.getConsoleSink() },
    loggers: [
      { category: "fedify", sinks: ["console"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
  });
}

// Tenant names of the server under test -> its loopback port. Fedify calls
// the global fetch() for documents, WebFinger and deliveries, so one wrapper
// sends all of them there, over node:http because fetch() (undici) will not
// send a Host header of the caller's: the Host must stay the tenant's name,
// which is what the server routes on and what the signature covers. Any
// other host is refused at once rather than left to DNS: the test machine
// reaches nothing outside. fedify.test (this process) is added on listen.
const hostMap = new Map();
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

globalThis.fetch = async (input, init) => {
  const req = new Request(input, init);
  const url = new URL(req.url);
  const port = hostMap.get(url.hostname);
  if (port === undefined) throw new TypeError(`fedify peer: no route to ${url.host}`);
  const headers = Object.fromEntries(req.headers);
  headers.host = req.headers.get("host") ?? url.host;
  const bodyless = req.method === "GET" || req.method === "HEAD";
  const body = bodyless ? null : Buffer.from(await req.arrayBuffer());
  return await new Promise((resolve, reject) => {
    const out = http.request(
      { host: "127.0.0.1", port, method: req.method, path: url.pathname + url.search, headers },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            h.set(k, Array.isArray(v) ? v.join(", ") : v);
          const status = res.statusCode;
          const data = NULL_BODY.has(status) ? null : Buffer.concat(chunks);
          resolve(new Response(data, { status, headers: h }));
        });
      },
    );
    out.on("error", reject);
    out.end(body ?? undefined);
  });
};

// 2048-bit RSA, as Mastodon uses: Fedify's own generateCryptoKeyPair() makes
// 4096-bit keys, which take seconds of CPU on a busy test machine.
const keys = {};
for (const name of ACTORS)
  keys[name] = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );

// What the control surface reports.
const received = []; // {type, id, actor, object, ...} in arrival order
const follows = {}; // our Follow id -> "pending" | "accepted" | "rejected"
const followers = {}; // actor name -> [follower URIs]
const notes = {}; // our notes by id, served back when fetched
const refused = []; // inbox POSTs Fedify refused: {path, status, form, error}
for (const name of ACTORS) followers[name] = [];

const federation = createFederation({
  kv: new MemoryKvStore(),
  origin: ORIGIN,
  allowPrivateAddress: true,
});

federation
  .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (!ACTORS.includes(identifier)) return null;
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: `Fedify ${identifier}`,
      url: ctx.getActorUri(identifier),
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: pairs[0].cryptographicKey,
      assertionMethods: pairs.map((p) => p.multikey),
    });
  })
  .setKeyPairsDispatcher((_ctx, identifier) => (keys[identifier] ? [keys[identifier]] : []));

federation.setObjectDispatcher(Note, "/users/{identifier}/notes/{id}", (ctx, values) => {
  const n = notes[ctx.getObjectUri(Note, values).href];
  return n ?? null;
});

const idOf = (v) => (v == null ? null : v.href ?? String(v));

function record(type, activity, extra = {}) {
  received.push({
    type,
    id: idOf(activity.id),
    actor: idOf(activity.actorId),
    object: idOf(activity.objectId),
    ...extra,
  });
}

federation
  .setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Follow, async (ctx, follow) => {
    record("Follow", follow);
    const target = ctx.parseUri(follow.objectId);
    if (target?.type !== "actor" || !ACTORS.includes(target.identifier)) return;
    const follower = await follow.getActor();
    if (follower == null) return;
    followers[target.identifier].push(follower.id.href);
    const accept = new Accept({
      id: new URL(`/users/${target.identifier}/accepts/${randomUUID()}`, ORIGIN),
      actor: ctx.getActorUri(target.identifier),
      object: follow,
    });
    // Answer the inbox POST first; the Accept goes out beside it.
    ctx.sendActivity({ identifier: target.identifier }, follower, accept).catch((e) => {
      received.push({ type: "error", error: `Accept to ${follower.id.href}: ${e.message}` });
    });
  })
  .on(Accept, async (_ctx, accept) => {
    record("Accept", accept);
    const id = idOf(accept.objectId);
    if (id in follows) follows[id] = "accepted";
  })
  .on(Reject, async (_ctx, reject) => {
    record("Reject", reject);
    const id = idOf(reject.objectId);
    if (id in follows) follows[id] = "rejected";
  })
  .on(Create, async (_ctx, create) => {
    const obj = await create.getObject();
    record("Create", create, {
      objectType: obj?.constructor?.name ?? null,
      content: obj?.content?.toString() ?? null,
      inReplyTo: idOf(obj?.replyTargetId),
      attributedTo: idOf(obj?.attributionId),
    });
  })
  // A report forwarded to us (Mastodon's Flag): the reported account and
  // statuses are its objects, the comment its content.
  .on(Flag, async (_ctx, flag) =>
    record("Flag", flag, {
      objects: flag.objectIds.map(idOf),
      content: flag.content?.toString() ?? null,
    }))
  .on(Like, async (_ctx, like) => record("Like", like))
  .on(Announce, async (_ctx, announce) => record("Announce", announce))
  .on(Undo, async (_ctx, undo) => {
    record("Undo", undo);
    // An undone Follow ends that actor's following; an undone Like or
    // Announce changes nothing kept here.
    const inner = await undo.getObject();
    if (inner instanceof Follow)
      for (const name of ACTORS)
        followers[name] = followers[name].filter((f) => f !== idOf(undo.actorId));
  });

// ---------------------------------------------------------------- control

// Activities sent by the control surface, by id, so /control/undo can undo them.
const sent = {};

function actorOf(ctx, name) {
  if (!ACTORS.includes(name)) throw new Error(`unknown actor '${name}'`);
  return ctx.getActorUri(name);
}

// The remote actor a status or actor URI belongs to, fetched (and so its
// inbox learned) through Fedify's own lookup.
async function lookupActor(ctx, uri) {
  const obj = await ctx.lookupObject(uri);
  if (obj == null) throw new Error(`cannot look up '${uri}'`);
  if (obj.inboxId != null) return obj;
  const author = obj.attributionId ?? obj.actorId;
  if (author == null) throw new Error(`'${uri}' has no author`);
  const actor = await ctx.lookupObject(author.href);
  if (actor?.inboxId == null) throw new Error(`author of '${uri}' has no inbox`);
  return actor;
}

function newId(name, kind) {
  return new URL(`/users/${name}/${kind}/${randomUUID()}`, ORIGIN);
}

const control = {
  async map(_ctx, b) {
    hostMap.set(String(b.host), Number(b.port));
    return {};
  },
  async follow(ctx, b) {
    const me = actorOf(ctx, b.actor);
    const target = await lookupActor(ctx, b.target);
    const follow = new Follow({ id: newId(b.actor, "follows"), actor: me, object: target.id });
    follows[follow.id.href] = "pending";
    sent[follow.id.href] = { activity: follow, to: target, actor: b.actor };
    await ctx.sendActivity({ identifier: b.actor }, target, follow, { immediate: true });
    return { id: follow.id.href };
  },
  async like(ctx, b) {
    const me = actorOf(ctx, b.actor);
    const author = await lookupActor(ctx, b.object);
    const like = new Like({ id: newId(b.actor, "likes"), actor: me, object: new URL(b.object) });
    sent[like.id.href] = { activity: like, to: author, actor: b.actor };
    await ctx.sendActivity({ identifier: b.actor }, author, like, { immediate: true });
    return { id: like.id.href };
  },
  async announce(ctx, b) {
    const me = actorOf(ctx, b.actor);
    const author = await lookupActor(ctx, b.object);
    const announce = new Announce({
      id: newId(b.actor, "announces"),
      actor: me,
      object: new URL(b.object),
      to: PUBLIC_COLLECTION,
      ccs: [author.id],
    });
    sent[announce.id.href] = { activity: announce, to: author, actor: b.actor };
    await ctx.sendActivity({ identifier: b.actor }, author, announce, { immediate: true });
    return { id: announce.id.href };
  },
  async reply(ctx, b) {
    const me = actorOf(ctx, b.actor);
    const author = await lookupActor(ctx, b.object);
    const noteId = ctx.getObjectUri(Note, { identifier: b.actor, id: randomUUID() });
    const handle = `@${author.preferredUsername}@${author.id.host}`;
    const note = new Note({
      id: noteId,
      attribution: me,
      content: b.content ?? `<p><a href="${author.id.href}">${handle}</a> hello from Fedify</p>`,
      replyTarget: new URL(b.object),
      to: PUBLIC_COLLECTION,
      ccs: [author.id],
      tags: [new Mention({ href: author.id, name: handle })],
      url: noteId,
    });
    notes[noteId.href] = note;
    const create = new Create({
      id: new URL(`${noteId.href}/activity`),
      actor: me,
      object: note,
      to: PUBLIC_COLLECTION,
      ccs: [author.id],
    });
    sent[create.id.href] = { activity: create, to: author, actor: b.actor };
    await ctx.sendActivity({ identifier: b.actor }, author, create, { immediate: true });
    return { id: create.id.href, note: noteId.href };
  },
  async quote(ctx, b) {
    const me = actorOf(ctx, b.actor);
    const author = await lookupActor(ctx, b.object);
    const noteId = ctx.getObjectUri(Note, { identifier: b.actor, id: randomUUID() });
    const note = new Note({
      id: noteId,
      attribution: me,
      content: "<p>quoting from Fedify</p>",
      quoteUrl: new URL(b.object),
      to: PUBLIC_COLLECTION,
      ccs: [author.id],
      url: noteId,
    });
    notes[noteId.href] = note;
    const create = new Create({
      id: new URL(`${noteId.href}/activity`),
      actor: me,
      object: note,
      to: PUBLIC_COLLECTION,
      ccs: [author.id],
    });
    sent[create.id.href] = { activity: create, to: author, actor: b.actor };
    await ctx.sendActivity({ identifier: b.actor }, author, create, { immediate: true });
    return { id: create.id.href, note: noteId.href };
  },
  async undo(ctx, b) {
    const s = sent[b.activity];
    if (!s) throw new Error(`nothing sent with id '${b.activity}'`);
    const undo = new Undo({
      id: newId(s.actor, "undos"),
      actor: ctx.getActorUri(s.actor),
      object: s.activity,
    });
    await ctx.sendActivity({ identifier: s.actor }, s.to, undo, { immediate: true });
    if (b.activity in follows) delete follows[b.activity];
    return { id: undo.id.href };
  },
};

function reply(res, status, obj) {
  const text = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(text);
}

async function onControl(req, res, url, body) {
  const ctx = federation.createContext(new URL(ORIGIN), undefined);
  if (req.method === "GET" && url.pathname === "/control/state")
    return reply(res, 200, { received, follows, followers, refused });
  const verb = url.pathname.slice("/control/".length);
  if (req.method !== "POST" || !Object.hasOwn(control, verb))
    return reply(res, 404, { error: `no control ${req.method} ${url.pathname}` });
  let b;
  try {
    b = JSON.parse(body.toString("utf8") || "{}");
  } catch (e) {
    return reply(res, 400, { error: `bad JSON: ${e.message}` });
  }
  try {
    return reply(res, 200, await control[verb](ctx, b));
  } catch (e) {
    return reply(res, 502, { error: String(e?.message ?? e) });
  }
}

// ------------------------------------------------------------ HTTP server

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const body = Buffer.concat(chunks);
    try {
      // The Host the caller used is kept, so Fedify answers for the name
      // the server under test asked for (its canonical origin regardless).
      const url = new URL(req.url, `http://${req.headers.host ?? "fedify.test"}`);
      if (url.pathname.startsWith("/control/")) return await onControl(req, res, url, body);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers))
        headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      const request = new Request(url, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      });
      const response = await federation.fetch(request, { contextData: undefined });
      if (req.method === "POST" && response.status >= 400) {
        // Kept so a test can tell a refused signature (401) from a slow
        // delivery, and which signing form the refused request used.
        const form = headers.has("signature-input")
          ? "rfc9421"
          : headers.has("signature")
            ? "draft-cavage"
            : "none";
        const error = await response.clone().text();
        refused.push({ path: url.pathname, status: response.status, form, error });
      }
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (e) {
      if (!res.headersSent) reply(res, 500, { error: String(e?.message ?? e) });
      else res.end();
    }
  });
});

// "fd:N": a listening socket the caller made (so it knew the port before
// this process had loaded); else a port, 0 or none for a free one.
const arg = process.argv[2] ?? "0";
const where = arg.startsWith("fd:")
  ? { fd: Number(arg.slice(3)) }
  : { port: Number(arg), host: "127.0.0.1" };
server.listen(where, () => {
  hostMap.set("fedify.test", server.address().port);
  process.stdout.write(`listening ${server.address().port}\n`);
});

// The test that started this holds stdin open; when it goes, so does this.
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();
