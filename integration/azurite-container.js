#!/usr/bin/env node
// azurite-container.js: a tiny Azure Blob client for Azurite (and only for it), using nothing but Node's
// built-in crypto and http modules, so that integration/emulators.sh and the docker-compose init service can
// create the test container without the Azure CLI or SDK.
//
// Usage:
//   node integration/azurite-container.js create CONTAINER      create it; "already exists" is success too
//   node integration/azurite-container.js list                  print every container name, one a line
//   node integration/azurite-container.js put CONTAINER BLOB    upload stdin as a block blob
//   node integration/azurite-container.js get CONTAINER BLOB    print the blob to stdout
//   node integration/azurite-container.js delete CONTAINER BLOB delete the blob
//
// Environment (defaults: the well-known development account on 127.0.0.1:10000):
//   AZURITE_BLOB_ENDPOINT   e.g. http://127.0.0.1:10000/devstoreaccount1 (path-style: the account is in the path)
//   AZURE_STORAGE_ACCOUNT   devstoreaccount1
//   AZURE_STORAGE_KEY       the account key, base64
//
// Every request is signed with Shared Key, the same scheme the SDKs use:
// https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key
'use strict';

const crypto = require('crypto');
const http = require('http');

// A version Azurite 3.37 knows; the script does not depend on anything newer.
const API_VERSION = '2021-12-02';
const account = process.env.AZURE_STORAGE_ACCOUNT || 'devstoreaccount1';
// The documented development key of devstoreaccount1: public, not a secret.
const key =
  process.env.AZURE_STORAGE_KEY ||
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const endpoint = new URL(process.env.AZURITE_BLOB_ENDPOINT || `http://127.0.0.1:10000/${account}`);

// sharedKey returns the Authorization header for a request. headers must have lower-case names.
function sharedKey(method, url, headers) {
  const h = (name) => (headers[name] === undefined ? '' : String(headers[name]));
  // Since API version 2015-02-21 a zero Content-Length is signed as the empty string.
  const contentLength = h('content-length') === '0' ? '' : h('content-length');
  const canonicalHeaders = Object.keys(headers)
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${h(name).trim()}\n`)
    .join('');
  // Canonicalized resource: /account + the path as sent (which, path-style, starts with /account again),
  // then each query parameter as "\nname:value", names lower-cased and sorted.
  let resource = `/${account}${url.pathname}`;
  const names = [...new Set([...url.searchParams.keys()].map((n) => n.toLowerCase()))].sort();
  for (const name of names) {
    const values = [...url.searchParams.entries()]
      .filter(([n]) => n.toLowerCase() === name)
      .map(([, v]) => v)
      .sort();
    resource += `\n${name}:${values.join(',')}`;
  }
  const stringToSign = [
    method,
    h('content-encoding'),
    h('content-language'),
    contentLength,
    h('content-md5'),
    h('content-type'),
    h('date'), // empty: we send x-ms-date instead
    h('if-modified-since'),
    h('if-match'),
    h('if-none-match'),
    h('if-unmodified-since'),
    h('range'),
  ].join('\n') + '\n' + canonicalHeaders + resource;
  const signature = crypto
    .createHmac('sha256', Buffer.from(key, 'base64'))
    .update(stringToSign, 'utf8')
    .digest('base64');
  return `SharedKey ${account}:${signature}`;
}

// request sends one signed request and resolves to {status, headers, body} (body is a Buffer).
function request(method, path, query, extraHeaders, body) {
  const url = new URL(endpoint.href.replace(/\/$/, '') + path);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const payload = body || Buffer.alloc(0);
  const headers = {
    'x-ms-date': new Date().toUTCString(),
    'x-ms-version': API_VERSION,
    'content-length': String(payload.length),
    ...extraHeaders,
  };
  headers.authorization = sharedKey(method, url, headers);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.setTimeout(10000, () => req.destroy(new Error(`timeout: ${method} ${url.href}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

// fail prints the unexpected answer and exits non-zero.
function fail(what, res) {
  process.stderr.write(`${what}: HTTP ${res.status} ${res.headers['x-ms-error-code'] || ''}\n${res.body}\n`);
  process.exit(1);
}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

async function main(args) {
  const [command, container, blob] = args;
  const enc = encodeURIComponent;
  // A blob name keeps its '/' separators unescaped, as the SDKs send them.
  const encBlob = (name) => name.split('/').map(encodeURIComponent).join('/');
  switch (command) {
    case 'create': {
      if (!container) break;
      const res = await request('PUT', `/${enc(container)}`, { restype: 'container' }, {});
      if (res.status === 201) console.log(`created container ${container}`);
      else if (res.status === 409 && res.headers['x-ms-error-code'] === 'ContainerAlreadyExists')
        console.log(`container ${container} already exists`);
      else fail(`create container ${container}`, res);
      return;
    }
    case 'list': {
      const res = await request('GET', '/', { comp: 'list' }, {});
      if (res.status !== 200) fail('list containers', res);
      // Each container is <Container><Name>…</Name>…; names are [a-z0-9-], so no XML unescaping is needed.
      for (const m of res.body.toString('utf8').matchAll(/<Container>\s*<Name>([^<]*)<\/Name>/g)) console.log(m[1]);
      return;
    }
    case 'put': {
      if (!container || !blob) break;
      const data = await readStdin();
      const res = await request('PUT', `/${enc(container)}/${encBlob(blob)}`, {}, {
        'x-ms-blob-type': 'BlockBlob',
        'content-type': 'application/octet-stream',
      }, data);
      if (res.status !== 201) fail(`put ${container}/${blob}`, res);
      console.log(`put ${container}/${blob} (${data.length} bytes, etag ${res.headers.etag})`);
      return;
    }
    case 'get': {
      if (!container || !blob) break;
      const res = await request('GET', `/${enc(container)}/${encBlob(blob)}`, {}, {});
      if (res.status !== 200) fail(`get ${container}/${blob}`, res);
      process.stdout.write(res.body);
      return;
    }
    case 'delete': {
      if (!container || !blob) break;
      const res = await request('DELETE', `/${enc(container)}/${encBlob(blob)}`, {}, {});
      if (res.status !== 202) fail(`delete ${container}/${blob}`, res);
      console.log(`deleted ${container}/${blob}`);
      return;
    }
  }
  process.stderr.write('usage: azurite-container.js create CONTAINER | list | put|get|delete CONTAINER BLOB\n');
  process.exit(2);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`azurite-container.js: ${err.message}\n`);
  process.exit(1);
});
