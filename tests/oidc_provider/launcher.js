// Runs oidc-provider on a free loopback port for Brain's single sign-on tests.
//
//   node launcher.js <config.json>
//
// The config names the clients ({client_id, client_secret, redirect_uris}) and the accounts
// (an id and its claims). Once listening it prints one line, "issuer <url>", on standard output.
// Routes under /_test/ let a test change what the provider says while it runs:
//   PUT  /_test/accounts   the accounts, as {"alice": {"email": ..., "groups": [...]}, ...}
//   PUT  /_test/tamper     {"mode": "payload", "claims": {...}} rewrites the claims of the next
//                          ID token the token endpoint hands out without signing it again;
//                          {"mode": "unsigned"} hands it out with alg "none"; {} stops
// Sign-in pages are replaced by two plain routes a test drives without a browser:
//   GET  /interaction/:uid        {"uid", "prompt"}
//   POST /interaction/:uid/login  login=<account id>: signs that account in (consent is implied)
import { readFileSync } from "node:fs";
import http from "node:http";

import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
let accounts = config.accounts || {};
let tamper = {};

const SCOPES = "openid email profile groups";
const CLAIMS = { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] };

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function b64(json) {
  return Buffer.from(JSON.stringify(json)).toString("base64url");
}

function tampered(idToken) {
  const [header, payload, signature] = idToken.split(".");
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  if (tamper.mode === "payload") return `${header}.${b64({ ...claims, ...(tamper.claims || {}) })}.${signature}`;
  if (tamper.mode === "unsigned") return `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
  return idToken;
}

const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: config.clients.map((client) => ({
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
    ...client,
  })),
  jwks: { keys: [jwk] },
  cookies: { keys: ["brain-test-provider-cookie-key"] },
  claims: CLAIMS,
  scopes: SCOPES.split(" "),
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    if (!accounts[id]) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) };
  },
  // Brain is the company's own application: its sign-ins need no consent screen.
  async loadExistingGrant(ctx) {
    const { Grant } = ctx.oidc.provider;
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return Grant.find(grantId);
    const grant = new Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(SCOPES);
    await grant.save();
    return grant;
  },
});

provider.use(async (ctx, next) => {
  if (ctx.path.startsWith("/_test/") && ctx.method === "PUT") {
    const body = JSON.parse((await readBody(ctx.req)) || "{}");
    if (ctx.path === "/_test/accounts") accounts = body;
    else if (ctx.path === "/_test/tamper") tamper = body;
    else return ctx.throw(404);
    ctx.body = { ok: true };
    return undefined;
  }
  const interaction = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (interaction) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (!interaction[2]) {
      ctx.body = { uid: details.uid, prompt: details.prompt.name };
      return undefined;
    }
    const login = new URLSearchParams(await readBody(ctx.req)).get("login");
    if (!accounts[login]) ctx.throw(400, `no account ${login}`);
    const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: login } });
    ctx.status = 303;
    ctx.redirect(to);
    return undefined;
  }
  await next();
  if (ctx.path === "/token" && tamper.mode && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: tampered(ctx.body.id_token) };
    tamper = {};
  }
  return undefined;
});

server.on("request", provider.callback());
process.stdout.write(`issuer ${issuer}\n`);
