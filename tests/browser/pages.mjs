// Eunha's pages in Debian's Chromium (puppeteer-core), checked with
// axe-core: run by browser_driver.c, which starts the server and seeds a
// tenant, a decoy tenant, a post, a user with two-factor sign-in and an
// OAuth application, and passes their names in EUNHA_BROWSER_*.
//
// For every page, in light and dark and at 360 and 1280 px wide: the
// status, a Content-Security-Policy without script or inline style, no
// script element, no horizontal scrolling, no serious or critical axe
// violation, and a screenshot under EUNHA_BROWSER_OUT. Then the
// authorization-code flow with PKCE by typing and clicking (a wrong
// password first, a second factor for another user), the code exchanged
// for a token that works, and the decoy's pages showing nothing of the
// tenant's. Then a sign-up on the tenant, which takes them by approval:
// errors beside the fields, the confirmation link from the mail (read from
// the test SMTP server's directory), refused until the owner approves it
// through the staff API, then signed in; and a password reset through the
// mailed link. The decoy reads in Korean and takes no sign-ups.
import puppeteer from 'puppeteer-core';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const port = env('EUNHA_BROWSER_PORT');
const host = env('EUNHA_BROWSER_HOST');
const decoy = env('EUNHA_BROWSER_DECOY');
const statusId = env('EUNHA_BROWSER_STATUS');
const clientId = env('EUNHA_BROWSER_CLIENT_ID');
const clientSecret = env('EUNHA_BROWSER_CLIENT_SECRET');
const password = env('EUNHA_BROWSER_PASSWORD');
const otpSecret = env('EUNHA_BROWSER_OTP_SECRET');
const staffToken = env('EUNHA_BROWSER_STAFF_TOKEN');
const maildir = env('EUNHA_BROWSER_MAILDIR');
const out = process.env.EUNHA_BROWSER_OUT || '/tmp/eunha-browser';
mkdirSync(out, { recursive: true });

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const OOB = 'urn:ietf:wg:oauth:2.0:oob';
const url = (h, path) => `http://${h}:${port}${path}`;

let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

// One request with a Host header, outside the browser (node's fetch will
// not let a script set Host).
function http(method, h, path, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { Host: `${h}:${port}`, ...headers } },
      (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

// RFC 6238 with SHA-1, 6 digits, 30 s steps, as authenticator apps do.
function totp(base32) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const step = Buffer.alloc(8);
  step.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000)));
  const mac = createHmac('sha1', key).update(step).digest();
  const o = mac[mac.length - 1] & 15;
  return String((mac.readUInt32BE(o) & 0x7fffffff) % 1e6).padStart(6, '0');
}

const b64url = (buf) => buf.toString('base64url');

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--host-resolver-rules=MAP * 127.0.0.1',
  ],
});

async function axe(page, name) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { resultTypes: ['violations'] }),
  );
  for (const v of res.violations) {
    if (v.impact === 'serious' || v.impact === 'critical') {
      check(false, `${name}: axe ${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target).join(' ')})`);
    }
  }
}

// The checks every page gets, in both colour schemes at both widths.
async function visit(page, h, path, name, status = 200, expect = null, want = 'en') {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
    for (const width of [360, 1280]) {
      await page.setViewport({ width, height: 900 });
      const res = await page.goto(url(h, path), { waitUntil: 'load' });
      const label = `${name} (${scheme}, ${width}px)`;
      check(res.status() === status, `${label}: status ${res.status()}, want ${status}`);
      const csp = res.headers()['content-security-policy'] || '';
      check(csp.includes("default-src 'none'") && !csp.includes('unsafe-inline') &&
            !csp.includes('script-src'), `${label}: CSP ${csp}`);
      check((await page.$$('script')).length === 0, `${label}: a script element`);
      const sheets = await page.evaluate(() => [...document.styleSheets].filter((s) => s.href).length);
      check(sheets >= 1, `${label}: the stylesheet did not load`);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      check(overflow <= 1, `${label}: ${overflow} px of horizontal scrolling`);
      const lang = await page.evaluate(() => document.documentElement.lang);
      check(lang === want, `${label}: lang=${lang}, want ${want}`);
      if (expect) {
        const text = await page.evaluate(() => document.body.innerText);
        check(text.includes(expect), `${label}: no "${expect}" in the page`);
      }
      await page.screenshot({ path: `${out}/${name}-${scheme}-${width}.png`, fullPage: true });
      await axe(page, label);
    }
  }
}

let page = await browser.newPage();
page.setDefaultTimeout(15000);

// A browser with no cookies, for the next person.
async function freshPage() {
  await page.close();
  const ctx = await browser.createBrowserContext();
  page = await ctx.newPage();
  page.setDefaultTimeout(15000);
}

// The newest message to `to` whose subject holds `subject`, as the SMTP
// sink wrote it (JSON); waits for the mail job.
async function mailTo(to, subject) {
  for (let i = 0; i < 200; i++) {
    const files = readdirSync(maildir).filter((f) => f.endsWith('.json')).sort().reverse();
    for (const f of files) {
      const m = JSON.parse(readFileSync(`${maildir}/${f}`, 'utf8'));
      if (m.rcpt_tos[0] === to && m.subject.includes(subject)) return m;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no mail to ${to} about "${subject}"`);
}

// The path and query of the message's link to path, on this server.
function mailLink(m, path) {
  const found = m.text.match(new RegExp(`https?://\\S*${path}\\?\\S+`));
  if (!found) throw new Error(`no ${path} link in ${m.text}`);
  const u = new URL(found[0]);
  return u.pathname + u.search;
}

async function shoot(name) {
  await page.screenshot({ path: `${out}/${name}-light-1280.png`, fullPage: true });
  await axe(page, name);
}

const bodyText = () => page.evaluate(() => document.body.innerText);

// ---------------------------------------------------------------- visitors
await visit(page, host, '/about', 'about', 200, 'Be kind');
await visit(page, host, '/privacy-policy', 'privacy-policy', 200);
await visit(page, host, '/terms-of-service', 'terms-of-service', 404);
await visit(page, host, '/@alice', 'profile', 200, 'greeting');
await visit(page, host, `/@alice/${statusId}`, 'status', 200, 'greeting');
await visit(page, host, '/@nobody', 'not-found', 404);
await visit(page, host, '/tags/pages', 'tag', 200, 'A picture for #pages');
// The sensitive picture is its blurhash until opened: no request for it.
check(await page.$eval('details.sensitive img.blurhash', (e) => e.src.startsWith('data:image/png') &&
  e.naturalWidth === 32).catch(() => false), 'tag: no blurhash image for the sensitive picture');
check(!(await page.$eval('details.sensitive', (e) => e.open)), 'tag: the sensitive picture is open');
await visit(page, host, '/auth/sign_in', 'sign-in', 200);
await visit(page, host, '/auth/sign_up', 'sign-up', 200, 'Be kind');
await visit(page, host, '/auth/password/new', 'password-new', 200);
await visit(page, host, '/auth/password/edit?reset_password_token=nope', 'password-invalid', 404,
  'invalid, already used or has expired');
await visit(page, host, '/auth/confirmation?confirmation_token=nope', 'confirmation-invalid', 404,
  'invalid or has expired');
// The decoy in Korean: its sign-in page, and sign-ups closed.
await visit(page, decoy, '/auth/sign_in', 'sign-in-ko', 200, '로그인', 'ko');
await visit(page, decoy, '/auth/sign_up', 'sign-up-closed-ko', 403, '가입이 닫혀 있습니다', 'ko');

// The accent colour reaches the buttons.
await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
await page.goto(url(host, '/auth/sign_in'));
const button = await page.$eval('button[type=submit]', (b) => getComputedStyle(b).backgroundColor);
check(button === 'rgb(11, 122, 117)', `the sign-in button is ${button}, not the accent`);

// ------------------------------------------- authorization code with PKCE
const verifier = b64url(randomBytes(32));
const challenge = b64url(createHash('sha256').update(verifier).digest());
const authorize = `/oauth/authorize?client_id=${encodeURIComponent(clientId)}` +
  `&redirect_uri=${encodeURIComponent(OOB)}&response_type=code&scope=read+write` +
  `&code_challenge=${challenge}&code_challenge_method=S256`;

async function submit(selector = 'button[type=submit]') {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(selector)]);
}

async function signIn(login, pw) {
  await page.type('#login', login);
  await page.type('#password', pw);
  await submit();
}

await page.goto(url(host, authorize));
check((await page.$('#login')) !== null, 'authorize: no sign-in form for a signed-out browser');
check((await page.evaluate(() => document.body.innerText)).includes('Browser Test App'),
  'authorize: the sign-in page does not name the application');
await signIn('alice', 'not the password');
check((await page.$eval('.error', (e) => e.textContent).catch(() => '')).length > 0,
  'a wrong password: no error shown');
check(!page.url().includes('password='), 'a wrong password: the password is in the URL');
await page.$eval('#login', (e) => (e.value = ''));
await signIn('alice', password);
let text = await page.evaluate(() => document.body.innerText);
check(text.includes('Authorization required') && text.includes('read everything in your account'),
  `consent: scopes not listed in words: ${text}`);
check(text.includes('Not @alice?'), 'consent: no "not you?"');
await page.screenshot({ path: `${out}/consent-light-1280.png`, fullPage: true });
await axe(page, 'consent');
await submit('button[value=approve]');
const code = await page.$eval('#code', (e) => e.value).catch(() => '');
check(code.length > 10, `no authorization code on the out-of-band page: ${page.url()}`);
await axe(page, 'code');
check(!page.url().includes(code), 'the code is in the URL of the page showing it');

const form = new URLSearchParams({
  grant_type: 'authorization_code', code, client_id: clientId, client_secret: clientSecret,
  redirect_uri: OOB, code_verifier: verifier,
}).toString();
let res = await http('POST', host, '/oauth/token', {
  body: form, headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
});
check(res.status === 200, `token exchange: ${res.status} ${res.body}`);
const token = res.status === 200 ? JSON.parse(res.body).access_token : '';
res = await http('GET', host, '/api/v1/accounts/verify_credentials', {
  headers: { Authorization: `Bearer ${token}` },
});
check(res.status === 200 && JSON.parse(res.body).username === 'alice',
  `the token from the browser flow: ${res.status} ${res.body}`);
// The same token means nothing on the decoy.
res = await http('GET', decoy, '/api/v1/accounts/verify_credentials', {
  headers: { Authorization: `Bearer ${token}` },
});
check(res.status === 401, `alice's token on the decoy: ${res.status}`);

// "Not you?": sign out from the consent page and come back to sign in.
await page.goto(url(host, authorize));
check((await page.$('button[value=approve]')) !== null, 'a signed-in browser skips no consent');
await submit('form[action="/auth/sign_out"] button');
check((await page.$('#login')) !== null, `not you: no sign-in form after signing out (${page.url()})`);

// ------------------------------------------------- a second factor (otto)
await signIn('otto', password);
check((await page.$('#code')) !== null, 'two-factor: no code form after the password');
await page.type('#code', '000000');
await submit();
check((await page.$eval('.error', (e) => e.textContent).catch(() => '')).length > 0,
  'two-factor: a wrong code shows no error');
await page.screenshot({ path: `${out}/two-factor-light-1280.png`, fullPage: true });
await axe(page, 'two-factor');
await page.type('#code', totp(otpSecret));
await submit();
text = await page.evaluate(() => document.body.innerText);
check(text.includes('Authorization required') && text.includes('@otto'),
  `two-factor: no consent for otto after the code: ${text.slice(0, 200)}`);

// ---------------------------------------------- sign-up, then approval
await freshPage();
await page.goto(url(host, '/auth/sign_in'));
await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
  page.click('a[href="/auth/sign_up"]')]);
await page.type('#username', 'petra');
await page.type('#email', 'petra@mail.example');
await page.type('#password', 'petra-password-1');
await page.type('#password_confirmation', 'petra-password-2');
await page.type('#reason', 'I read pages.');
await submit();
check((await page.$('#password_confirmation-error')) !== null,
  'sign-up: passwords that differ show no error beside the field');
check((await page.$('#agreement-error')) !== null, 'sign-up: rules not accepted show no error');
check((await page.$eval('#username', (e) => e.value)) === 'petra', 'sign-up: the username was lost');
check((await page.$eval('#password', (e) => e.value)) === '', 'sign-up: the password came back');
await shoot('sign-up-errors');
await page.type('#password', 'petra-password-1');
await page.type('#password_confirmation', 'petra-password-1');
await page.click('#agreement');
await submit();
text = await bodyText();
check(text.includes('Check your e-mail'), `sign-up: no "check your e-mail": ${text.slice(0, 300)}`);
await shoot('sign-up-done');
const confirmPath = mailLink(await mailTo('petra@mail.example', 'Confirmation instructions'),
  '/auth/confirmation');
await page.goto(url(host, confirmPath));
text = await bodyText();
check(text.includes('successfully confirmed'), `confirmation: ${text.slice(0, 300)}`);
await shoot('confirmed');
// Not approved yet: the sign-in says so.
await page.goto(url(host, authorize));
await signIn('petra', 'petra-password-1');
text = await bodyText();
check(text.includes('pending review'), `an unapproved sign-in: ${text.slice(0, 300)}`);
// The owner approves her through the staff API.
const staff = { headers: { Authorization: `Bearer ${staffToken}` } };
res = await http('GET', host, '/api/v1/admin/accounts?pending=true', staff);
const petra = res.status === 200 ? JSON.parse(res.body).find((a) => a.username === 'petra') : null;
check(petra, `petra is not pending: ${res.status} ${res.body.slice(0, 300)}`);
res = await http('POST', host, `/api/v1/admin/accounts/${petra && petra.id}/approve`, staff);
check(res.status === 200, `approving petra: ${res.status} ${res.body.slice(0, 300)}`);
await page.$eval('#login', (e) => (e.value = ''));
await signIn('petra', 'petra-password-1');
text = await bodyText();
check(text.includes('Authorization required') && text.includes('@petra'),
  `petra approved cannot sign in: ${text.slice(0, 300)}`);

// -------------------------------------------------------- password reset
await freshPage();
await page.goto(url(host, '/auth/sign_in'));
await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
  page.click('a[href="/auth/password/new"]')]);
await page.type('#email', 'petra@mail.example');
await submit();
text = await bodyText();
check(text.includes('If your email address exists'), `reset asked: ${text.slice(0, 300)}`);
await shoot('password-sent');
const resetPath = mailLink(await mailTo('petra@mail.example', 'Reset password instructions'),
  '/auth/password/edit');
await visit(page, host, resetPath, 'password-edit', 200, 'Set a new password');
await page.type('#password', 'petra-new-password');
await page.type('#password_confirmation', 'not-the-same-one');
await submit();
check((await page.$eval('.error', (e) => e.textContent).catch(() => '')).includes('match'),
  'reset: passwords that differ show no error');
await page.type('#password', 'petra-new-password');
await page.type('#password_confirmation', 'petra-new-password');
await submit();
text = await bodyText();
check(text.includes('changed successfully'), `reset: ${text.slice(0, 300)}`);
await shoot('password-changed');
await page.goto(url(host, resetPath));
check((await bodyText()).includes('already used'), 'reset: the link works twice');
await page.goto(url(host, authorize));
await signIn('petra', 'petra-new-password');
text = await bodyText();
check(text.includes('Authorization required') && text.includes('@petra'),
  `the new password does not sign in: ${text.slice(0, 300)}`);

// ------------------------------------------------------------ the decoy
for (const path of ['/about', '/auth/sign_in', '/auth/sign_up', '/privacy-policy']) {
  await page.goto(url(decoy, path));
  const body = await page.content();
  check(!body.includes('Pages &amp; Co') && !body.includes('Be kind') && !body.includes('0b7a75') &&
        !body.includes('petra'),
    `decoy ${path} shows the tenant's own`);
}

// ------------------------------------------- moderation and settings
// (browser_driver.c's seed_moderation): mona moderates, pete awaits
// approval, alice reported otto; the decoy has a pending sign-up and a
// report of its own. Every page in both schemes at both widths, then a
// plain user refused, a sign-up approved and a report resolved by
// clicking, and nothing of the decoy's shown or reachable by id.
async function moderation() {
  const report = env('EUNHA_BROWSER_MOD_REPORT');
  const decoyReport = env('EUNHA_BROWSER_MOD_DECOY_REPORT');
  const pending = env('EUNHA_BROWSER_MOD_PENDING');
  const decoyPending = env('EUNHA_BROWSER_MOD_DECOY_PENDING');
  const target = env('EUNHA_BROWSER_MOD_TARGET');

  // Each person in a browser context of their own (cookies apart).
  async function signedIn(login, path) {
    const ctx = await browser.createBrowserContext();
    const p = await ctx.newPage();
    p.setDefaultTimeout(15000);
    await p.goto(url(host, `/auth/sign_in?return_to=${encodeURIComponent(path)}`));
    await p.type('#login', login);
    await p.type('#password', password);
    const [res] = await Promise.all([
      p.waitForNavigation({ waitUntil: 'load' }), p.click('button[type=submit]'),
    ]);
    return { ctx, p, res };
  }
  async function click(p, selector) {
    const [res] = await Promise.all([p.waitForNavigation({ waitUntil: 'load' }), p.click(selector)]);
    return res;
  }

  // A plain user: 403 with a page, in the frame.
  const plain = await signedIn('alice', '/admin/reports');
  check(plain.res.status() === 403, `alice on /admin/reports: ${plain.res.status()}`);
  await visit(plain.p, host, '/admin/reports', 'admin-forbidden', 403, 'Not allowed');
  for (const path of ['/admin', '/admin/accounts', '/admin/rules', '/admin/custom_emojis',
    '/admin/domain_blocks']) {
    const r = await plain.p.goto(url(host, path));
    check(r.status() === 403, `alice on ${path}: ${r.status()}`);
  }
  for (const [path, name] of [
    ['/settings/profile', 'settings-profile'],
    ['/settings/applications', 'settings-applications'],
    ['/settings/sessions', 'settings-sessions'],
    ['/settings/email', 'settings-email'],
    ['/settings/password', 'settings-password'],
    ['/settings/otp_authentication', 'settings-two-factor'],
    ['/settings/migration', 'settings-migration'],
    ['/settings/delete', 'settings-delete'],
  ]) {
    await visit(plain.p, host, path, name, 200);
    const current = await plain.p.$eval('nav a[aria-current=page]', (a) => a.getAttribute('href'))
      .catch(() => '');
    check(current === path, `${name}: the navigation marks ${current}, not ${path}`);
  }
  // An avatar chosen from the profile page: made into the account's image;
  // a file that is no image refused with the API's text, nothing changed.
  const png = `${out}/avatar.png`;
  writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAbElEQVR4nBXNQRUAUQhC' +
    'UZOYhCQmeUlIQhISzR+XXA7ODDtouIHBQ4YOM8suWm5h8ZKl+0CskDiBsIioHhx76LiDw0eO3oN/4FVf+J8h' +
    '0PduzBqZ8x/bxNQPwgaFy192SGgelC0q13/CJaXlA+odUoHdRJQGAAAAAElFTkSuQmCC', 'base64'));
  const notImage = `${out}/not-an-image.png`;
  writeFileSync(notImage, 'plain text, not a picture');
  await plain.p.goto(url(host, '/settings/profile'));
  await (await plain.p.$('#avatar')).uploadFile(notImage);
  let up = await click(plain.p, 'form[action="/settings/profile"] button[type=submit]');
  check(up.status() === 422 && (await plain.p.content()).includes('Avatar content type is invalid'),
    `a text file as avatar: ${up.status()}`);
  await (await plain.p.$('#avatar')).uploadFile(png);
  up = await click(plain.p, 'form[action="/settings/profile"] button[type=submit]');
  const avatarSrc = await plain.p.$eval('img.avatar', (i) => i.getAttribute('src')).catch(() => '');
  check(up.status() === 200 && plain.p.url().endsWith('?saved=1') && !avatarSrc.includes('missing'),
    `uploading an avatar: ${up.status()} ${plain.p.url()} ${avatarSrc}`);
  await plain.ctx.close();

  const mod = await signedIn('mona', '/admin/reports');
  check(mod.res.status() === 200, `mona on /admin/reports: ${mod.res.status()}`);
  const p = mod.p;
  let res;
  await visit(p, host, '/admin/reports', 'admin-reports', 200, 'Otto spams');
  await visit(p, host, '/admin/reports?resolved=1', 'admin-reports-resolved', 200);
  await visit(p, host, `/admin/reports/${report}`, 'admin-report', 200, 'Otto spams');
  await visit(p, host, '/admin/accounts', 'admin-pending', 200, 'I would like to join');
  await visit(p, host, `/admin/accounts/${target}`, 'admin-account', 200, '@otto');
  res = await p.goto(url(host, '/admin/rules'));
  check(res.status() === 403, `a moderator on /admin/rules: ${res.status()}`);

  // Nothing of the decoy's, not even by id.
  for (const path of ['/admin/reports', '/admin/accounts']) {
    await p.goto(url(host, path));
    const body = await p.content();
    check(!body.includes('Decoy report') && !body.includes('Decoy reason'),
      `${path} shows the decoy's`);
  }
  res = await p.goto(url(host, `/admin/reports/${decoyReport}`));
  check(res.status() === 404, `the decoy's report by id: ${res.status()}`);
  res = await p.goto(url(host, `/admin/accounts/${decoyPending}`));
  check(res.status() === 404, `the decoy's pending sign-up by id: ${res.status()}`);
  res = await p.goto(url(decoy, '/admin/reports'));
  check(!(await p.content()).includes('Otto spams'), "the decoy's host shows the tenant's report");

  // Approve pete by clicking; pete can then sign in.
  await p.goto(url(host, '/admin/accounts'));
  res = await click(p, `li[data-account="${pending}"] input[value=approve] ~ button`);
  check(res.status() === 200 && !(await p.content()).includes(`data-account="${pending}"`),
    'approving pete: still listed');
  const pete = await signedIn('pete', '/settings/sessions');
  check(pete.res.status() === 200, `pete after approval: ${pete.res.status()} ${pete.p.url()}`);
  await pete.ctx.close();

  // Assign the report to me, then resolve it, by clicking.
  await p.goto(url(host, `/admin/reports/${report}`));
  await click(p, 'form input[value=assign] ~ button');
  let text = await p.evaluate(() => document.body.innerText);
  check(text.includes('@mona') && text.includes('Unassign'), `assigning: ${text.slice(0, 300)}`);
  await click(p, 'form input[value=resolve] ~ button');
  text = await p.evaluate(() => document.body.innerText);
  check(text.includes('Resolved') && text.includes('Reopen'), `resolving: ${text.slice(0, 300)}`);
  await p.goto(url(host, '/admin/reports'));
  check(!(await p.content()).includes(`data-report="${report}"`), 'the resolved report is still open');
  await mod.ctx.close();

  // An admin edits the rules.
  const admin = await signedIn('olga', '/admin/rules');
  check(admin.res.status() === 200, `olga on /admin/rules: ${admin.res.status()}`);
  await visit(admin.p, host, '/admin/rules', 'admin-rules', 200, 'Add a rule');
  await admin.p.type('#new-text', 'No spam');
  await click(admin.p, 'form[action="/admin/rules"] button');
  check((await admin.p.evaluate(() => document.body.innerHTML)).includes('value="No spam"'),
    'adding a rule: not listed');
  await visit(admin.p, host, '/admin/custom_emojis', 'admin-custom-emojis', 200);
  // ... uploads an emoji from the page's form ...
  await admin.p.type('#shortcode', 'blobwave');
  await (await admin.p.$('#image')).uploadFile(png);
  res = await click(admin.p, 'form[action="/admin/custom_emojis"] button[type=submit]');
  check(res.status() === 200 && (await admin.p.content()).includes(':blobwave:'),
    `uploading an emoji: ${res.status()}`);
  // ... and blocks a server by typing and choosing, then sees it listed.
  await visit(admin.p, host, '/admin/domain_blocks', 'admin-domain-blocks', 200, 'Block a server');
  await admin.p.type('#domain', 'spam.example');
  await admin.p.select('#severity', 'suspend');
  await admin.p.click('input[name=reject_media]');
  await click(admin.p, 'form[action="/admin/domain_blocks"] button[type=submit]');
  text = await admin.p.evaluate(() => document.body.innerText);
  check(text.includes('spam.example') && text.includes('Suspend'), `blocking: ${text.slice(0, 300)}`);
  await visit(admin.p, host, '/admin/domain_blocks', 'admin-domain-blocks-listed', 200, 'spam.example');
  await admin.ctx.close();
}
await moderation();

await browser.close();
if (failures) {
  console.error(`${failures} check(s) failed; screenshots in ${out}`);
  process.exit(1);
}
console.log(`browser: every page passed; screenshots in ${out}`);
